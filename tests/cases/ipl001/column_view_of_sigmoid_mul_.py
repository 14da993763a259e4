# label: hazard raises
# why: col is a view of the sigmoid output (basic indexing x[:, 0]); writing through the view changes the saved output
import torch
import torch.nn as nn

torch.manual_seed(0)

box_head = nn.Linear(5, 4)
feats = torch.randn(6, 5)

boxes = torch.sigmoid(box_head(feats))
col = boxes[:, 0]
col.mul_(2.0)  # <-- IPL001
loss = boxes.sum()
loss.backward()
