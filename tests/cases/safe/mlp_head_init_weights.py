# label: safe no-twin
# why: nn.init.*_ and .data writes touch parameters only in __init__, before any forward pass builds a graph
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ClassifierHead(nn.Module):
    def __init__(self, dim=8, hidden=16, num_classes=4):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, num_classes)
        self.init_weights()

    def init_weights(self):
        nn.init.normal_(self.cls_token, std=0.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        self.fc2.weight.data.mul_(0.5)
        self.fc2.bias.data.fill_(0.1)

    def forward(self, x):
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1)
        return self.fc2(self.act(self.fc1(x[:, 0])))


head = ClassifierHead()
tokens = torch.randn(3, 4, 8)
labels = torch.tensor([0, 2, 3])
logits = head(tokens)
loss = F.cross_entropy(logits, labels)
loss.backward()
cls_grad = head.cls_token.grad
fc1_grad = head.fc1.weight.grad
