# label: safe
# why: in-place dropout runs on Linear outputs (Linear saves its input, not its output) and nothing saved them before the mask is applied
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features, drop=0.1):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop, inplace=True)
        self.p = drop

    def forward(self, x):
        x = self.fc1(x)
        x = F.dropout(x, p=self.p, training=self.training, inplace=True)
        x = self.act(x)
        x = self.fc2(x)
        x = self.drop(x)
        return x


norm = nn.LayerNorm(8)
mlp = Mlp(8, 32)
x = torch.randn(2, 4, 8, requires_grad=True)
out = x + mlp(norm(x))
loss = out.pow(2).mean()
loss.backward()
fc1_grad = mlp.fc1.weight.grad
fc2_grad = mlp.fc2.weight.grad
x_grad = x.grad
