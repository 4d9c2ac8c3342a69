"""Slash commands typed into a notebook or `jupyter console` cell, as in the albedo console.

A cell line `/reload session` becomes `%albedo /reload session` before IPython reads the cell (an
input transformer, so IPython's own `/` autocall never sees it), and the `%albedo` line magic sends
the line to the runtime, which parses, runs and renders it (`commands.slash`). Tab after a slash
command asks the runtime for completions (`commands.complete`) and offers nothing else.
"""

from __future__ import annotations

import re
from typing import Any, List

from ._contract import COMMANDS_COMPLETE, COMMANDS_SLASH
from ._display import SlashResult, as_result
from ._transport import RpcChannel, current_cell

MAGIC = "albedo"
# A slash command at the start of a line: "/" then a name (letters first), then anything.
SLASH_LINE = re.compile(r"^(\s*)(/[A-Za-z][\w:.-]*(?:[ \t].*)?)$")
# How long Tab may wait for the runtime before offering nothing.
COMPLETE_DEADLINE_S = 1.0
# What a bare `%albedo` runs.
DEFAULT_LINE = "/help"
# `%albedo --show /x`: display the result now instead of returning it.
SHOW_FLAG = "--show"


def _bracket_depth(text: str) -> int:
    """Open brackets in `text`, strings left out: a line inside an open bracket continues an expression (`x = (a` / `/ b)`)."""
    depth = 0
    for char in re.sub(r"(\"\"\"|'''|\"|')(?:\\.|(?!\1).)*\1", "", text, flags=re.S):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
    return depth


def transform_slash_lines(lines: List[str]) -> List[str]:
    """IPython cleanup transformer: each top-level line `/name args` becomes `%albedo /name args`.

    IPython shows the value of a cell's last line only; a slash line before it is shown as it
    runs (`%albedo --show`), so every command typed in the cell answers.
    """
    out: List[str] = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        body = line.rstrip("\n")
        match = SLASH_LINE.match(body)
        continues = out and (out[-1].rstrip("\n").endswith("\\") or _bracket_depth("".join(out)) > 0)
        if match is None or continues:
            out.append(line)
            continue
        show = "" if index == last else f"{SHOW_FLAG} "
        out.append(f"{match.group(1)}%{MAGIC} {show}{match.group(2)}{line[len(body):]}")
    return out


def run_line(channel: RpcChannel, line: str) -> Any:
    """Runs one slash line in the session: a skill's activation comes back as an Activation, anything else as a SlashResult."""
    __tracebackhide__ = True  # noqa: F841
    text = line.strip() or DEFAULT_LINE
    if not text.startswith("/"):
        text = "/" + text
    answer = channel.call_sync(COMMANDS_SLASH, {"line": text}, current_cell())
    if answer.get("submits_turn"):
        return as_result(answer.get("value"))
    return SlashResult(str(answer.get("command")), answer.get("value"), str(answer.get("text", "")))


def complete_line(channel: RpcChannel, line: str) -> List[str]:
    """Whole-line completions of a typed slash line; none when the runtime does not answer in time."""
    try:
        answer = channel.call_sync(COMMANDS_COMPLETE, {"line": line}, deadline=COMPLETE_DEADLINE_S)
    except Exception:  # Tab must never raise into IPython's completer
        return []
    matches = answer.get("matches") if isinstance(answer, dict) else None
    return [str(m) for m in matches] if isinstance(matches, list) else []


def install(ip: Any, channel: RpcChannel) -> None:
    """Adds the transformer, the `%albedo` magic and the slash completer to an IPython shell; idempotent."""
    if transform_slash_lines not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(transform_slash_lines)

    def albedo(line: str) -> Any:
        """Runs an albedo slash command: `%albedo /reload session`, `%albedo help` (a bare `%albedo` is /help).

        The result is returned (`r = %albedo /skills` keeps its `.value`); with --show first it is displayed instead.
        """
        __tracebackhide__ = True  # noqa: F841
        words = line.split(None, 1)
        if words and words[0] == SHOW_FLAG:
            from IPython.display import display

            display(run_line(channel, words[1] if len(words) > 1 else ""))
            return None
        return run_line(channel, line)

    ip.register_magic_function(albedo, "line", MAGIC)
    completer = getattr(ip, "Completer", None)
    if completer is not None and not any(getattr(m, "_albedo", False) for m in completer.custom_matchers):
        completer.custom_matchers.insert(0, _slash_matcher(channel))


def uninstall(ip: Any) -> None:
    """Takes the transformer and the completer back out; the `%albedo` magic stays (IPython cannot unregister one)."""
    if transform_slash_lines in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(transform_slash_lines)
    completer = getattr(ip, "Completer", None)
    if completer is not None:
        completer.custom_matchers[:] = [m for m in completer.custom_matchers if not getattr(m, "_albedo", False)]


def _slash_matcher(channel: RpcChannel) -> Any:
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher(priority=1000, identifier="albedo.slash")
    def slash_matcher(context: Any) -> Any:
        typed = context.text_until_cursor
        stripped = typed.lstrip()
        prefix = f"%{MAGIC} "
        if stripped.startswith(prefix):
            stripped = stripped[len(prefix):].lstrip()
        if not stripped.startswith("/"):
            return {"completions": [], "suppress": False}
        # The word being typed is replaced; the runtime answers whole lines.
        fragment = re.split(r"\s", stripped)[-1]
        start = len(stripped) - len(fragment)
        completions = [SimpleCompletion(match[start:], type="albedo") for match in complete_line(channel, stripped) if match.startswith(stripped[:start])]
        # Only albedo's answers: IPython's magics and Python names make no sense after a slash command.
        return {"completions": completions, "suppress": True, "matched_fragment": fragment}

    slash_matcher._albedo = True  # type: ignore[attr-defined]
    return slash_matcher
