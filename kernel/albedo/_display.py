"""How albedo's results and errors look to a person in a console or a notebook.

Results stay plain data (an activation is a dict, a built-in's result what the runtime sent); these
classes only add the rendering hooks IPython looks for. Tracebacks of albedo's errors leave out the
package's own frames: they say nothing about the user's code.
"""

from __future__ import annotations

import inspect
import os
import types
from typing import Any, Optional


def _place(filename: str) -> str:
    """A code object's file as a comparable path. A module served from source on a remote kernel is
    named `<albedo runtime>/...`, which is no path: kept as it is, so a later chdir cannot move it."""
    return filename if filename.startswith("<") else os.path.abspath(filename)


PACKAGE_DIR = os.path.dirname(_place(__file__))
# The fields every skill activation carries (C-5); a result with them is shown as one.
ACTIVATION_FIELDS = frozenset({"name", "source", "arguments", "instructions"})


class Activation(dict):  # type: ignore[type-arg]
    """A skill activation: the data as a dict (`a["instructions"]`), shown as the skill's name, source and arguments, then its instructions."""

    def _header(self) -> str:
        arguments = self.get("arguments")
        shown = arguments if isinstance(arguments, str) else ", ".join(f"{k}={v!r}" for k, v in dict(arguments or {}).items())
        lines = [f"skill {self.get('name')}  ({self.get('source')})"]
        if shown:
            lines.append(f"arguments: {shown}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        if cycle:
            printer.text("Activation(...)")
            return
        printer.text(f"{self._header()}\n\n{str(self.get('instructions', '')).rstrip()}")

    def _repr_markdown_(self) -> str:
        arguments = self.get("arguments")
        details = f"\n\n**arguments:** `{arguments}`" if arguments else ""
        # The instructions are SKILL.md's Markdown body: rendered as written.
        return f"**skill `{self.get('name')}`** · `{self.get('source')}`{details}\n\n---\n\n{self.get('instructions', '')}"


class SlashResult:
    """What a typed slash line came to: `value` is the data, the runtime's `text` is how it reads."""

    def __init__(self, command: str, value: Any, text: str):
        self.command = command
        self.value = value
        self.text = text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text.rstrip("\n"))

    def _repr_markdown_(self) -> str:
        # Tables and aligned columns only line up in a fixed-width block.
        return f"```text\n{self.text.rstrip()}\n```"

    def __repr__(self) -> str:
        return f"<{self.command} result: .value holds the data>"


def as_result(value: Any) -> Any:
    """`value` as it is, but an activation as an Activation."""
    if isinstance(value, dict) and ACTIVATION_FIELDS <= value.keys():
        return Activation(value)
    return value


def shaped(result: Any) -> Any:
    """as_result of a call's result, whether the call returned it or an awaitable of it."""
    if not inspect.isawaitable(result):
        return as_result(result)

    async def wait() -> Any:
        __tracebackhide__ = True  # noqa: F841 (IPython hides frames that set it)
        return as_result(await result)

    return wait()


def user_traceback(tb: Optional[types.TracebackType]) -> Optional[types.TracebackType]:
    """`tb` without the frames of this package."""
    kept = []
    while tb is not None:
        if not _place(tb.tb_frame.f_code.co_filename).startswith((PACKAGE_DIR + "/", PACKAGE_DIR + os.sep)):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt: Optional[types.TracebackType] = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


class WithoutAlbedoFrames:
    """Mixed into an exception albedo raises: IPython shows its traceback without the package's own frames."""

    def _render_traceback_(self) -> Any:
        """IPython's hook."""
        return render_traceback(self)  # type: ignore[arg-type]


def render_traceback(error: BaseException) -> Any:
    """IPython's structured traceback of `error` without albedo's frames (the `_render_traceback_` hook)."""
    from IPython import get_ipython

    shell = get_ipython()
    tb = user_traceback(error.__traceback__)
    if shell is None:
        import traceback

        return traceback.format_exception(type(error), error, tb)
    return shell.InteractiveTB.structured_traceback(type(error), error, tb)
