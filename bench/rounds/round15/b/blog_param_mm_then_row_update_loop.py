# label: hazard raises
# why: b is the output of torch.mm(self.param, a) and feeds the next torch.mm(self.param, b), which saves it; the loop then rewrites b[i] in place, so the saved b is at a newer version at backward time.
# source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html
import torch
import torch.nn as nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self, n=10):
        super(Model, self).__init__()
        self.n = n
        self.param = nn.Parameter(torch.randn(n, n) * 0.1)

    def forward(self, a):
        b = torch.Tensor(self.n, 1)
        y = 0
        b = torch.mm(self.param, a)
        for i in range(self.n):
            b[i] = b[i] + 1  # <-- IPL001: in-place row write on b after torch.mm(self.param, b) saved it
            y = y + torch.mm(self.param, b)
        return y


model = Model()
a = torch.randn(10, 1)
y = model(a)
loss = y.pow(2).sum()
loss.backward()
