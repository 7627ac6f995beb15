"""Convert a model of the old stable-baselines3 ``.zip`` format to the project's format.

    python -m agents.convert OLD.zip NEW      # writes NEW.safetensors and NEW.json

WARNING: this UNPICKLES ``OLD.zip``. stable-baselines3's loader runs whatever code the file's
pickles name, so a crafted file runs arbitrary code on your machine. Use it only on a file you
trust (one you trained yourself); nothing else in the project reads these files. The new files
load without running anything from them (:mod:`agents.policy`).

What the model was trained for comes from the metadata ``train.py`` stored in the zip, or else
from the run record ``OLD.json`` beside it, whose other fields (the learning curve, the
evaluation...) are carried over. The new model holds the weights only, no optimizer state.
Needs the train extra.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .base import AgentSpecError

WARNING = "this unpickles {path}, which runs any code the file names: use it only on a file you trust"


def convert(old: str, new: str) -> dict:
    """Convert ``old`` (an SB3 .zip, trusted) to ``new`` (without extension); returns the record."""
    from sb3_contrib import MaskablePPO

    from . import sb3_model
    from .policy import META_KEYS, PolicyAgent, check_record

    if not os.path.exists(old):
        raise AgentSpecError(f"no file at {old}")
    prev = {}
    side = os.path.splitext(old)[0] + ".json"
    if os.path.exists(side):
        with open(side) as f:
            prev = json.load(f)
        prev = prev if isinstance(prev, dict) else {}
    model = MaskablePPO.load(old, device="cpu")  # the unpickling
    meta = getattr(model, "havok_meta", None) or {k: prev.get(k) for k in META_KEYS}
    if any(meta.get(k) is None for k in META_KEYS):
        raise AgentSpecError(f"{old} does not say what it was trained for (no metadata, no {side})")
    hyper = dict(prev.get("hyperparameters") or {})
    hyper.update(sb3_model.hyperparameters(model))
    rec = {**prev, **sb3_model.record(model, meta, hyperparameters=hyper)}
    if isinstance(prev.get("timesteps"), int):
        rec["timesteps"] = prev["timesteps"]
    rec.update(model=new + ".safetensors", converted_from=os.path.basename(old))
    check_record(rec, new + ".json")
    sb3_model.save(model, new, rec)
    PolicyAgent.load(new)  # it reads back
    return rec


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.convert", description=__doc__.split("\n\n")[0],
                                epilog="WARNING: this unpickles OLD.zip; use it only on a file you trust.")
    p.add_argument("old", metavar="OLD.zip", help="a model saved by an earlier train.py (trusted)")
    p.add_argument("new", metavar="NEW", help="output path without extension")
    args = p.parse_args(argv)
    new = args.new[:-12] if args.new.endswith(".safetensors") else args.new
    print("agents.convert: " + WARNING.format(path=args.old), file=sys.stderr)
    try:
        rec = convert(args.old, new)
    except ImportError as e:
        print(f"agents.convert: error: {e.name} is missing: pip install -e '.[train]'", file=sys.stderr)
        return 2
    except AgentSpecError as e:
        print(f"agents.convert: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - whatever stable-baselines3 makes of the file
        print(f"agents.convert: error: cannot convert {args.old}: {type(e).__name__}: {e}".splitlines()[0],
              file=sys.stderr)
        return 2
    size = os.path.getsize(new + ".safetensors")
    print(f"wrote {new}.safetensors ({size / 1e6:.2f} MB, weights only) and {new}.json: "
          f"{rec['dragon']} ({rec['affinity']}), {rec['players']} players")
    return 0


if __name__ == "__main__":
    sys.exit(main())
