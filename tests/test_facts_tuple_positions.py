"""A constant index into a tuple picks the element stored at that position, not every element
(untuned run 28, torch-molecule's MolGPT: ``self.lstm(x)[1][0]`` is the final hidden state,
which ``nn.LSTM`` does not save on the CPU, and ``+=`` on it is safe; ``[0]``, the output
sequence, is saved). The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

LSTM = """
import torch
from torch import nn


class Scaffold(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 4)

    def forward(self, tokens, type_embd):
        embeds = self.lstm(self.emb(tokens).permute(1, 0, 2)){index}
        embeds = embeds.permute(1, 0, 2)
        embeds += type_embd
        return embeds


model = Scaffold()
out = model(torch.randint(0, 10, (2, 3)), torch.randn(2, 1, 4))
out.sum().backward()
"""

PAIR = """
import torch

x = torch.randn(3, requires_grad=True)
out = torch.sigmoid(x)
pair = (out, x * 2)
{write}
(pair[0] + pair[1]).sum().backward()
"""


def test_the_hidden_state_of_an_lstm_is_not_its_saved_output() -> None:
    hazard = LSTM.format(index="[0]")
    assert codes(hazard) == [(15, "IPL001")]
    safe = [LSTM.format(index=index) for index in ("[1][0]", "[1][1]")]
    for source in safe:
        assert codes(source) == []
    behave(hazard, *safe)


def test_a_constant_index_into_a_tuple_display_reads_that_element() -> None:
    hazard = PAIR.format(write="pair[0].add_(1)")
    assert codes(hazard) == [(7, "IPL001")]
    safe = PAIR.format(write="pair[1].add_(1)")
    assert codes(safe) == []
    behave(hazard, safe)
