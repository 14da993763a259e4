"""A plain class's methods know what their later callers pass (``late_callers``), and calling
an instance calls its ``__call__`` (round 27's allennlp ``LinearBiasMitigator``: ``main``
passes a bias direction that requires grad, and ``bias_direction /= torch.linalg.norm(
bias_direction)`` overwrites what ``norm`` saved). The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

MITIGATOR = """
import torch


class LinearBiasMitigator:
    def __init__(self, requires_grad=True):
        self.requires_grad = requires_grad

    def {method}(self, embeddings, bias_direction):
        {normalise}
        projection = torch.matmul(embeddings, bias_direction.reshape(-1, 1)) * bias_direction
        return embeddings - projection


def main():
    embedding = torch.nn.Embedding(10, 4)
    he, she = embedding(torch.tensor([1, 3])), embedding(torch.tensor([2, 4]))
    bias_direction = he.mean(dim=0) - she.mean(dim=0)
    mitigator = LinearBiasMitigator()
    mitigated = {call}(embedding(torch.tensor([5, 6])), bias_direction)
    mitigated.sum().backward()


main()
"""

HAZARD = "bias_direction /= torch.linalg.norm(bias_direction)"
SAFE = "bias_direction = bias_direction / torch.linalg.norm(bias_direction)"


def _pair(method: str, call: str) -> tuple[str, str]:
    return (
        MITIGATOR.format(method=method, call=call, normalise=HAZARD),
        MITIGATOR.format(method=method, call=call, normalise=SAFE),
    )


def test_calling_an_instance_calls_its_dunder_call_with_the_callers_grads() -> None:
    hazard, safe = _pair("__call__", "mitigator")
    assert codes(hazard) == [(10, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_calling_a_fresh_instance_at_once_calls_its_dunder_call() -> None:
    hazard, safe = _pair("__call__", "LinearBiasMitigator()")
    assert codes(hazard) == [(10, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_method_called_from_a_later_plain_function_knows_its_grads() -> None:
    hazard, safe = _pair("mitigate", "mitigator.mitigate")
    assert codes(hazard) == [(10, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_method_whose_callers_pass_no_grad_stays_quiet() -> None:
    hazard, _ = _pair("mitigate", "mitigator.mitigate")
    quiet = hazard.replace("embedding = torch.nn.Embedding(10, 4)", "embedding = torch.rand")
    quiet = quiet.replace("embedding(torch.tensor([1, 3]))", "embedding(2, 4)")
    quiet = quiet.replace("embedding(torch.tensor([2, 4]))", "embedding(2, 4)")
    quiet = quiet.replace("embedding(torch.tensor([5, 6]))", "embedding(2, 4)")
    quiet = quiet.replace("mitigated.sum().backward()", "print(mitigated.sum())")
    assert codes(quiet) == []
