"""The `skills` and `commands` objects; every method is one JSON-RPC call to the runtime, declared there."""

from __future__ import annotations

import inspect
import keyword
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._contract import (
    COMMANDS_CATALOG,
    COMMANDS_CATALOG_DOC,
    COMMANDS_CATALOG_PARAMS,
    COMMANDS_INVOKE,
    COMMANDS_INVOKE_DOC,
    COMMANDS_INVOKE_PARAMS,
    REQUIRED,
    SKILLS_LIST,
    SKILLS_LIST_DOC,
    SKILLS_LIST_PARAMS,
    SKILLS_READ,
    SKILLS_READ_DOC,
    SKILLS_READ_PARAMS,
    SKILLS_RESOURCES,
    SKILLS_RESOURCES_DOC,
    SKILLS_RESOURCES_PARAMS,
)
from ._display import shaped
from ._missing import unknown_method
from ._transport import RpcChannel

RESERVED_NAMES = frozenset({"catalog", "invoke", "help"})


def declared(method: str, params: Sequence[Tuple[str, Any]], doc: str, shape: Optional[Callable[[Any], Any]] = None) -> Callable[..., Any]:
    """A namespace method calling `method` with the parameters the runtime declares (None-valued ones are left out)."""
    parameters = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default) for name, default in params]
    signature = inspect.Signature(parameters)

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        answer = self._channel.call(method, {key: value for key, value in bound.arguments.items() if value is not None})
        return answer if shape is None else shape(answer)

    call.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *parameters])  # type: ignore[attr-defined]
    call.__name__ = method.rsplit(".", 1)[-1]
    call.__qualname__ = method
    call.__doc__ = doc
    call._albedo_signature = signature  # type: ignore[attr-defined]
    return call


def described(owner: type, *names: str) -> str:
    """`read(name, resource='SKILL.md', ...)` for each declared method of `owner`, joined."""
    return ", ".join(f"{name}{getattr(owner, name)._albedo_signature}" for name in names)


class Skills:
    """The session's skills: list(), read(name, resource, offset, limit), resources(name)."""

    def __init__(self, channel: RpcChannel):
        self._channel = channel

    list = declared(SKILLS_LIST, SKILLS_LIST_PARAMS, SKILLS_LIST_DOC)
    read = declared(SKILLS_READ, SKILLS_READ_PARAMS, SKILLS_READ_DOC)
    resources = declared(SKILLS_RESOURCES, SKILLS_RESOURCES_PARAMS, SKILLS_RESOURCES_DOC)

    def __repr__(self) -> str:
        return f"<albedo skills: {described(Skills, 'list', 'read', 'resources')}>"


class Commands:
    """The session's commands: catalog(), invoke(name, arguments), and one typed method per model command."""

    def __init__(self, channel: RpcChannel):
        self._channel = channel
        self._typed: List[str] = []

    catalog = declared(COMMANDS_CATALOG, COMMANDS_CATALOG_PARAMS, COMMANDS_CATALOG_DOC)
    invoke = declared(COMMANDS_INVOKE, COMMANDS_INVOKE_PARAMS, COMMANDS_INVOKE_DOC, shaped)

    def __getattr__(self, name: str) -> Any:
        # Only names lookup did not find reach here; private ones are IPython's and jedi's probes.
        if name.startswith("_"):
            raise AttributeError(name)
        raise unknown_method(self, name, self._typed, method_name)

    def __repr__(self) -> str:
        typed = ", ".join(self._typed) or "none"
        return f"<albedo commands: {described(Commands, 'catalog', 'invoke')}; typed: {typed}>"


def method_name(slash_name: str) -> Optional[str]:
    """The Python name for a slash command, or None when it cannot be a method name."""
    name = slash_name[1:] if slash_name.startswith("/") else slash_name
    name = name.replace("-", "_")
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in RESERVED_NAMES:
        return None
    if hasattr(Commands, name):
        return None
    return name


def mint(commands: Commands, catalog: Any) -> List[str]:
    """Adds one typed method per model-callable command of `catalog` to `commands`; returns the names."""
    declarations = catalog.get("commands", []) if isinstance(catalog, dict) else []
    candidates: Dict[str, List[Dict[str, Any]]] = {}
    for declaration in declarations:
        if not isinstance(declaration, dict) or "model" not in (declaration.get("callers") or []):
            continue
        name = method_name(str(declaration.get("name", "")))
        if name is not None:
            candidates.setdefault(name, []).append(declaration)
    minted = []
    for name, found in sorted(candidates.items()):
        if len(found) != 1:
            continue  # colliding names stay reachable through invoke() only
        method = _typed_method(commands._channel, name, found[0])
        if method is not None:
            setattr(commands, name, method)
            minted.append(name)
    commands._typed = minted
    return minted


def _typed_method(channel: RpcChannel, name: str, declaration: Dict[str, Any]) -> Optional[Callable[..., Any]]:
    slash_name = str(declaration["name"])
    arguments = [a for a in declaration.get("arguments") or [] if isinstance(a, dict)]
    wire_names = {}
    parameters = []
    optional_seen = False
    for argument in arguments:
        wire = str(argument.get("name", ""))
        python = wire.replace("-", "_")
        if not python.isidentifier() or keyword.iskeyword(python) or python in wire_names:
            return None
        wire_names[python] = wire
        optional_seen = optional_seen or not argument.get("required")
        # After an optional argument the rest take a default too; the runtime still checks required ones.
        default = None if optional_seen else inspect.Parameter.empty
        parameters.append(inspect.Parameter(python, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    signature = inspect.Signature(parameters)

    def typed(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841
        bound = signature.bind(*args, **kwargs)
        values = {wire_names[key]: value for key, value in bound.arguments.items() if value is not None}
        return shaped(channel.call(COMMANDS_INVOKE, {"name": slash_name, "arguments": values}))

    typed.__signature__ = signature  # type: ignore[attr-defined]
    typed.__name__ = name
    typed.__qualname__ = f"commands.{name}"
    typed.__doc__ = _docstring(slash_name, declaration, arguments)
    return typed


def _docstring(slash_name: str, declaration: Dict[str, Any], arguments: List[Dict[str, Any]]) -> str:
    lines = [str(declaration.get("description", "")).strip() or slash_name, ""]
    if arguments:
        lines.append("Arguments:")
        for argument in arguments:
            need = "required" if argument.get("required") else "optional"
            lines.append(f"    {argument.get('name')} ({need}): {argument.get('help', '')}")
        lines.append("")
    lines.append(f"Runs {slash_name} through commands.invoke; await it in a notebook cell.")
    return "\n".join(lines)
