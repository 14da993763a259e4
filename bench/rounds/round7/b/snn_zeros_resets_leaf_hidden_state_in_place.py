# label: hazard raises
# why: SpikingNeuron.zeros resets the hidden states with state.zero_(), but before the first forward the membrane state is a leaf that requires grad, so the in-place reset is rejected by autograd.
# source: https://github.com/jeshraghian/snntorch/pull/443
import torch
import torch.nn as nn

torch.manual_seed(0)


class SpikingNeuron(nn.Module):
    def __init__(self, threshold=1.0):
        super().__init__()
        self.threshold = threshold

    def fire(self, mem):
        mem_shift = mem - self.threshold
        # straight-through surrogate: heaviside forward, sigmoid gradient backward
        surrogate = torch.sigmoid(5 * mem_shift)
        return (mem_shift > 0).float() + surrogate - surrogate.detach()

    @staticmethod
    def zeros(*args):
        """Clear hidden state variables to zero."""
        for state in args:
            state.zero_()  # <-- IPL003: zeros a hidden state that is still a leaf requiring grad


class Leaky(SpikingNeuron):
    def __init__(self, beta, threshold=1.0):
        super().__init__(threshold)
        self.beta = beta

    def init_leaky(self, shape, learn_init=True):
        return torch.ones(*shape, requires_grad=learn_init)

    def forward(self, input_, mem):
        mem = self.beta * mem + input_
        spk = self.fire(mem)
        mem = mem - spk * self.threshold
        return spk, mem


class Net(nn.Module):
    def __init__(self, num_inputs=5, num_hidden=4, num_outputs=2, beta=0.9):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, num_hidden)
        self.lif1 = Leaky(beta=beta)
        self.fc2 = nn.Linear(num_hidden, num_outputs)
        self.lif2 = Leaky(beta=beta)

    def forward(self, x, mem1, mem2):
        spk2_rec = []
        for step in range(x.size(0)):
            spk1, mem1 = self.lif1(self.fc1(x[step]), mem1)
            spk2, mem2 = self.lif2(self.fc2(spk1), mem2)
            spk2_rec.append(spk2)
        return torch.stack(spk2_rec)


net = Net()
data = torch.rand(6, 3, 5)
targets = torch.tensor([0, 1, 0])
mem1 = net.lif1.init_leaky((3, 4))
mem2 = net.lif2.init_leaky((3, 2))
SpikingNeuron.zeros(mem1, mem2)  # reset the membrane at the start of the batch
spk_rec = net(data, mem1, mem2)
loss = nn.functional.cross_entropy(spk_rec.sum(0), targets)
loss.backward()
