# label: safe
# why: labels is a clone of input_ids, so writing [MASK] into input_ids leaves the targets untouched; `labels[~mask] = -100` writes the clone, whose new value is what the loss wants.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, MASK_ID = 20, 19

embed = nn.Embedding(VOCAB, 8)
lm_head = nn.Linear(8, VOCAB)

input_ids = torch.randint(0, VOCAB - 1, (3, 7))
labels = input_ids.clone()
mask = torch.rand(3, 7) < 0.3
mask[:, 0] = True
labels[~mask] = -100
input_ids[mask] = MASK_ID

logits = lm_head(embed(input_ids))
loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1), ignore_index=-100)
loss.backward()
