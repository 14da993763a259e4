"""A same-file function held as a value is called where the value is called: a parameter of
``__init__`` that every construction leaves at its default or gives one same-file function
(round 27's e3nn ``SE3PointKernel(radial_function=gaussian_radial_function)`` calling
``self.radial_function(...)`` in forward), an attribute ``__init__`` sets to one
(``self.radial_function = gaussian_radial``), a local name bound to one. The programs are run
with torch.
"""

from __future__ import annotations

from programs import behave, codes

KERNEL = """
import torch


def gaussian_radial_function(r_field, radii, sigma=0.6):
    basis = []
    for r in radii:
        window = torch.exp(-0.5 * ((r_field - r) / sigma) ** 2)
        {normalise}
        basis.append(window)
    return torch.stack(basis)


class SE3PointKernel(torch.nn.Module):
    def __init__(self, radii, {param}):
        super().__init__()
        self.radii = radii
        self.radial_function = {stored}

    def forward(self, difference_mat):
        r_field = difference_mat.norm(dim=-1)
        return self.radial_function(r_field, self.radii)


geometry = torch.randn(5, 3, requires_grad=True)
kernel = SE3PointKernel([0.5, 1.0, 2.0])
kernel(geometry.unsqueeze(1) - geometry.unsqueeze(0)).sum().backward()
"""

HAZARD = "window /= 2.5"
SAFE = "window = window / 2.5"


def test_a_default_argument_function_is_what_the_attribute_calls() -> None:
    held = {"param": "radial_function=gaussian_radial_function", "stored": "radial_function"}
    hazard = KERNEL.format(normalise=HAZARD, **held)
    safe = KERNEL.format(normalise=SAFE, **held)
    assert codes(hazard) == [(9, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_an_attribute_set_to_a_same_file_function_calls_it() -> None:
    held = {"param": "unused=None", "stored": "gaussian_radial_function"}
    hazard = KERNEL.format(normalise=HAZARD, **held)
    safe = KERNEL.format(normalise=SAFE, **held)
    assert codes(hazard) == [(9, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_construction_passing_another_function_is_not_the_default() -> None:
    held = {"param": "radial_function=gaussian_radial_function", "stored": "radial_function"}
    source = KERNEL.format(normalise=HAZARD, **held).replace(
        "SE3PointKernel([0.5, 1.0, 2.0])", "SE3PointKernel([0.5, 1.0, 2.0], torch.sigmoid)"
    )
    assert (9, "IPL001") not in codes(source)  # never called here: torch's sigmoid is
