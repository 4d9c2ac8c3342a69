"""The error for `commands.<name>` when no such method exists, saying what to write instead.

Typed methods are made once, when the kernel starts (a method that appeared later would read a
catalog the code did not see); a command a later reload added is reached through invoke().
"""

from __future__ import annotations

import difflib
from typing import Any, Dict, List, Optional

from ._contract import COMMANDS_CATALOG
from ._display import WithoutAlbedoFrames

# How long looking the name up in the current catalog may take; the error comes without it after that.
LOOKUP_DEADLINE_S = 2.0
MAX_SUGGESTIONS = 3


class UnknownCommandMethod(WithoutAlbedoFrames, AttributeError):
    """`commands.<name>` that is not a method; the message says what to call instead."""


def _slash_by_method(catalog: Any, method_name: Any) -> Dict[str, str]:
    """Each current command's Python name -> its slash name."""
    found: Dict[str, str] = {}
    for declaration in (catalog or {}).get("commands", []) if isinstance(catalog, dict) else []:
        slash = str(declaration.get("name", "")) if isinstance(declaration, dict) else ""
        python = method_name(slash)
        if python is not None:
            found.setdefault(python, slash)
    return found


def unknown_method(commands: Any, name: str, typed: List[str], method_name: Any) -> UnknownCommandMethod:
    """The error for `commands.<name>`: a command added after start gets its invoke() call, anything else the closest names."""
    try:
        current: Optional[Dict[str, str]] = _slash_by_method(commands._channel.call_sync(COMMANDS_CATALOG, {}, deadline=LOOKUP_DEADLINE_S), method_name)
    except Exception:  # the lookup only improves the message; without it the error still stands
        current = None
    slash = (current or {}).get(name)
    if slash is not None:
        error = UnknownCommandMethod(
            f"commands.{name} is not a method: typed methods are made when the kernel starts, and {slash} came with a later "
            f'reload. Call it with: await commands.invoke("{slash}", "<arguments>")'
        )
    else:
        known = sorted(set(typed) | {"catalog", "invoke"} | set(current or {}))
        close = difflib.get_close_matches(name, known, n=MAX_SUGGESTIONS)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        error = UnknownCommandMethod(
            f"commands has no method {name!r}{hint or '.'} await commands.catalog() lists every command; "
            'await commands.invoke("/name", "<arguments>") runs any of them'
        )
    error.name, error.obj = name, commands
    return error
