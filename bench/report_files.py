"""A comparison's report on disk: STEM.md (the table), STEM.json (the data;
JSON has no inf/NaN, so those become strings) and STEM.png (the plot)."""

import json
import math
import os


def finite(o):
  """`o` with every non-finite float as its string."""
  if isinstance(o, float) and not math.isfinite(o):
    return str(o)
  if isinstance(o, dict):
    return {k: finite(v) for k, v in o.items()}
  if isinstance(o, (list, tuple)):
    return [finite(v) for v in o]
  return o


def write_report(out_dir, stem, md, report, plot, log):
  """Prints and writes `md`, writes `report` and plot(report, path); a plot
  that fails is logged, never fatal. Returns the paths' common base."""
  print(md)
  os.makedirs(out_dir, exist_ok=True)
  base = os.path.join(out_dir, stem)
  with open(base + ".md", "w") as f:
    f.write(md)
  with open(base + ".json", "w") as f:
    json.dump(finite(report), f, indent=1, default=str)
    f.write("\n")
  try:
    plot(report, base + ".png")
  except Exception as e:  # noqa: BLE001
    log(f"plot failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
  return base
