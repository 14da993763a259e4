# label: safe
# why: mem.detach_() runs only after the truncated window's backward and optimizer step, so detaching the membrane state in place just starts a new graph, exactly like rebinding mem = mem.detach()
# source: https://github.com/jeshraghian/snntorch/issues/172
import torch
import torch.nn as nn

torch.manual_seed(0)


class ATan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem, alpha=2.0):
        ctx.save_for_backward(mem)
        ctx.alpha = alpha
        return (mem > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (mem,) = ctx.saved_tensors
        grad = ctx.alpha / 2 / (1 + (torch.pi / 2 * ctx.alpha * mem).pow(2)) * grad_output
        return grad, None


class Leaky(nn.Module):
    def __init__(self, beta, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input_, mem):
        reset = (mem - self.threshold > 0).float().detach()
        mem = self.beta * mem + input_ - reset * self.threshold
        spk = ATan.apply(mem - self.threshold)
        return spk, mem


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.lif1 = Leaky(beta=0.9)
        self.fc2 = nn.Linear(6, 2)
        self.lif2 = Leaky(beta=0.9)

    def init_leaky(self, batch):
        return torch.zeros(batch, 6), torch.zeros(batch, 2)

    def forward(self, x, mem1, mem2):
        spk1, mem1 = self.lif1(self.fc1(x), mem1)
        spk2, mem2 = self.lif2(self.fc2(spk1), mem2)
        return spk2, mem1, mem2


net = Net()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
data = torch.rand(12, 3, 4) * 2
targets = torch.randint(0, 2, (3,))
K = 4

mem1, mem2 = net.init_leaky(3)
loss_hist = []
step_loss = 0
for step in range(data.shape[0]):
    spk2, mem1, mem2 = net(data[step], mem1, mem2)
    step_loss = step_loss + nn.functional.cross_entropy(mem2, targets)
    if (step + 1) % K == 0:
        optimizer.zero_grad()
        step_loss.backward()
        optimizer.step()
        loss_hist.append(step_loss.item())
        step_loss = 0
        mem1.detach_()
        mem2.detach_()

final_mem = mem2
