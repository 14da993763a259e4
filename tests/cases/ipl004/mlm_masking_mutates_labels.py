# label: hazard silent
# why: mask_tokens writes [MASK] ids into its argument, so `labels = input_ids` also contains the masks and the MLM target is wrong
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, MASK_ID = 12, 11


def mask_tokens(ids, prob):
    chosen = torch.rand(ids.shape) < prob
    ids[chosen] = MASK_ID  # <-- IPL004
    return ids


class TinyMLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 6)
        self.out = nn.Linear(6, VOCAB)

    def forward(self, ids):
        return self.out(torch.tanh(self.emb(ids)))


model = TinyMLM()
input_ids = torch.randint(0, 10, (3, 8))
inputs = mask_tokens(input_ids, 0.3)
labels = input_ids
logits = model(inputs)
loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
loss.backward()
