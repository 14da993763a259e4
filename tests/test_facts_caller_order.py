"""Plain functions are analysed after their same-file callers, so that what every call
passes is known when their parameters are bound: the grad (``arg_grads``) and whether it is
a tensor for sure (``arg_sure``: not a value that may be a Python number). Reduced from
kaolin's spherical-Gaussian specular term (round 20). Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

SPECULAR = """
import torch


def term(normal, view):
    d = normal * 2
    h = d + view
    {normalize}
    return h


def main():
    normal = torch.randn(4, 3, requires_grad=True)
    view = torch.randn(4, 3)
    term(normal, view).sum().backward()


main()
"""


def test_a_helper_defined_before_its_caller_sees_the_callers_tensors() -> None:
    for normalize in ("h /= torch.sqrt((h * h).sum(-1, keepdim=True))", "h /= h.norm()"):
        hazard = SPECULAR.format(normalize=normalize)
        safe = SPECULAR.format(normalize=normalize.replace("h /= ", "h = h / "))
        assert codes(hazard) == [(8, "IPL001")], normalize
        assert codes(safe) == [], normalize
        behave(hazard, safe)


def test_a_helper_only_given_numbers_is_no_tensor_code() -> None:
    source = SPECULAR.replace(
        "    normal = torch.randn(4, 3, requires_grad=True)\n    view = torch.randn(4, 3)\n"
        "    term(normal, view).sum().backward()",
        "    return term(2.0, 1.0)",
    ).format(normalize="h /= (h * h) ** 0.5")
    assert codes(source) == []


COUNTS = """
import torch


def tensorize(graphs, width):
    scope = []
    total_atoms = 0
    for n_atoms in graphs:
        scope.append((total_atoms, n_atoms))
        total_atoms += n_atoms
    agraph = torch.zeros(total_atoms, width).long()
    return agraph, scope


agraph, scope = tensorize([2, 3], 4)
"""


def test_a_size_given_to_a_factory_is_no_tensor_evidence() -> None:
    """dive-into-graphs' JTVAE (untuned run 13): ``torch.zeros(total_atoms, k)`` takes a
    count; ``total_atoms += n`` rebinds an int, which the scope tuples do not see."""
    assert codes(COUNTS) == []
    scope = run(COUNTS)["scope"]
    assert scope == [(0, 2), (2, 3)]
