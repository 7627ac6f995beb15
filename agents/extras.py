"""Which optional packages a command needs, checked before it does any work.

The core install (``pip install -e .``) has only numpy, gymnasium and pettingzoo; the scripts name
the extra to install in one line instead of failing half-way with a ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib.util

# module -> the name pip installs it by
PIP_NAMES = {"stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib", "ray": "ray[rllib]"}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import; a module without a spec
        return False


def missing(needs: dict[str, str], extra: str) -> str | None:
    """``needs`` maps modules to what needs them; returns the one-line message naming the missing
    ones and the extra to install (None when all are installed)."""
    gone = [(PIP_NAMES.get(m, m), why) for m, why in needs.items() if not _installed(m)]
    if not gone:
        return None
    what = ", ".join(f"{name} ({why})" for name, why in gone)
    return (f"{what} {'is' if len(gone) == 1 else 'are'} not installed: "
            f"pip install -e '.[{extra}]' (or pip install {' '.join(n for n, _ in gone)})")
