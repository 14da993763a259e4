# label: hazard silent
# why: labels is the same tensor as input_ids, so writing the [MASK] id into input_ids also overwrites the targets and the model is trained to predict [MASK].
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, MASK_ID = 20, 19

embed = nn.Embedding(VOCAB, 8)
lm_head = nn.Linear(8, VOCAB)

input_ids = torch.randint(0, VOCAB - 1, (3, 7))
labels = input_ids
mask = torch.rand(3, 7) < 0.3
mask[:, 0] = True
input_ids[mask] = MASK_ID  # <-- IPL002: labels aliases input_ids

logits = lm_head(embed(input_ids))
loss = F.cross_entropy(logits[mask], labels[mask])
loss.backward()
