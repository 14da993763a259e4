"""Score ``confirm`` with every run on one torch device: ``tools/confirm_score.py`` with the
checker's ``device=`` (what ``inplace-lint confirm --device D`` does) in every worker.

    python bench/confirm_device.py --device cuda tests/cases bench/rounds/round6 [--jobs 8]

Arguments after ``--device`` are ``tools/confirm_score.py``'s. The device is checked once
(a clear error, exit 2, when it cannot be used); the score's worker processes are spawned,
so each imports this file again and applies the same device before it scores a case.
Without ``--device`` (or with ``--device none``) this is ``tools/confirm_score.py`` itself.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "INPLACE_LINT_BENCH_DEVICE"
sys.path.insert(0, str(ROOT / "tools"))


def _apply(name: str) -> None:
    """Make ``core.check`` run on ``name`` in this process (the score looks it up per case)."""
    from inplace_lint.dynamic import core
    from inplace_lint.dynamic.device import resolve

    if not isinstance(core.check, functools.partial):
        core.check = functools.partial(core.check, device=resolve(name))


if os.environ.get(ENV):  # a spawned worker: the parent chose the device
    _apply(os.environ[ENV])


def main(argv: list[str]) -> int:
    device = None
    if "--device" in argv:
        at = argv.index("--device")
        device, argv = argv[at + 1], argv[:at] + argv[at + 2 :]
    if device and device != "none":
        from inplace_lint.dynamic.device import DeviceError

        try:
            _apply(device)
        except DeviceError as exc:
            print(f"confirm_device: error: {exc}", file=sys.stderr)
            return 2
        os.environ[ENV] = device
        print(f"every run on --device {device}", flush=True)
    import confirm_score

    return int(confirm_score.main(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
