# label: hazard raises
# why: a function run under torch.utils.checkpoint centres its input in place, so the recomputation in backward sees a modified input.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

ffn_in = nn.Linear(8, 32)
ffn_out = nn.Linear(32, 8)


def ffn_block(hidden):
    hidden.sub_(hidden.mean(dim=-1, keepdim=True))  # <-- IPL004: mutates the checkpointed input
    return ffn_out(torch.relu(ffn_in(hidden)))


embed = nn.Embedding(20, 8)
tokens = torch.randint(0, 20, (2, 6))
hidden = embed(tokens) * 1.0
out = checkpoint(ffn_block, hidden, use_reentrant=False)
loss = out.pow(2).mean()
loss.backward()
