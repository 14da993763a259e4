"""Two ways a tensor travels that the facts followed too little (OpenRLHF's actor, round 34):

- a helper that may hand back its argument (``_ensure_full_tensor(tensor)`` returns
  ``tensor`` unless it is a DTensor) leaves a name bound to its result an alias of that
  argument: ``logits = _ensure_full_tensor(logits)`` then ``logits.div_(t)`` writes the
  caller's tensor (the summary used to take ``logits`` for rebound);
- a same-file module whose ``forward`` returns a dict display gives its caller a record read
  by key: ``output["logits"]`` is the tensor the forward put there, with its grad and saves.

So the entropy's ``logsumexp`` saves the logits, and the temperature's in-place division of
them breaks backward. The out-of-place division is clean. The programs run with torch.
"""

from __future__ import annotations

import pytest
from programs import IN_PLACE_ERROR, codes, run

ACTOR = """
import torch
import torch.nn as nn


def _ensure_full_tensor(tensor):
    if hasattr(tensor, "full_tensor"):
        return tensor.full_tensor()
    return tensor


def log_probs_from_logits(logits, labels, temperature=1.0):
    logits = _ensure_full_tensor(logits)
    if temperature != 1.0:
        {divide}
    return torch.gather(logits, dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)


def compute_entropy(logits):
    pd = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 4)
        self.head = nn.Linear(4, 8)

    def forward(self, tokens):
        return {{"logits": self.head(self.embed(tokens))}}


class Actor(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.model = TinyLM()
        self.temperature = temperature

    def forward(self, tokens):
        output = self.model(tokens)
        entropy = compute_entropy(_ensure_full_tensor(output["logits"]))
        log_probs = log_probs_from_logits(output["logits"], tokens, self.temperature)
        return log_probs, entropy


torch.manual_seed(0)
log_probs, entropy = Actor(0.7)(torch.randint(0, 8, (2, 5)))
(log_probs.sum() - 0.01 * entropy.sum()).backward()
"""


def test_writing_what_a_helper_handed_back_writes_the_callers_saved_logits() -> None:
    source = ACTOR.format(divide="logits.div_(temperature)")
    assert codes(source) == [(15, "IPL001")]
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        run(source)


def test_the_out_of_place_division_is_clean() -> None:
    source = ACTOR.format(divide="logits = logits / temperature")
    assert codes(source) == []
    run(source)
