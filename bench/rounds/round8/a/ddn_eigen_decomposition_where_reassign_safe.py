# label: safe
# why: the fixed solver builds a new tensor with L = torch.where(...), so the eigenvalues saved by eigh are left untouched.
# source: https://github.com/anucvml/ddn/pull/18
import torch
import torch.nn as nn

torch.manual_seed(0)


class EigenDecompositionFcn:
    eps = 1.0e-2

    @staticmethod
    def solve(X, top_k=2):
        L, Y = torch.linalg.eigh(X)
        L = torch.where(L.abs() < EigenDecompositionFcn.eps, torch.full_like(L, EigenDecompositionFcn.eps), L)
        return L[:, -top_k:], Y[:, :, -top_k:]


class EigenPool(nn.Module):
    """Second-order pooling of CNN features followed by the top eigenvectors."""

    def __init__(self, channels=4, top_k=2):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, 1, 1)
        self.top_k = top_k
        self.fc = nn.Linear(channels * top_k + top_k, 3)

    def forward(self, img):
        f = self.conv(img).flatten(2)
        X = torch.bmm(f, f.transpose(1, 2)) / f.shape[2]
        L, Y = EigenDecompositionFcn.solve(X, self.top_k)
        return self.fc(torch.cat([L, Y.flatten(1)], 1))


model = EigenPool()
img = torch.rand(2, 3, 6, 6)
labels = torch.tensor([0, 2])
logits = model(img)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
