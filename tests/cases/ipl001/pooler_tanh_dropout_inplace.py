# label: hazard raises
# why: the pooler's tanh saves its output and the self.dropout module (inplace=True) overwrites it in forward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Pooler(nn.Module):
    def __init__(self, hidden, n_classes):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(0.1, inplace=True)
        self.classifier = nn.Linear(hidden, n_classes)

    def forward(self, hidden_states):
        cls = hidden_states[:, 0]
        pooled = torch.tanh(self.dense(cls))
        pooled = self.dropout(pooled)  # <-- IPL001
        return self.classifier(pooled)


model = Pooler(12, 3)
model.train()
hs = torch.randn(4, 7, 12)
labels = torch.tensor([0, 2, 1, 1])
logits = model(hs)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
