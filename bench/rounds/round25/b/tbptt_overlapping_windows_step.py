# label: hazard raises no-twin
# why: with k1 < k2 the TBPTT trainer keeps (retain_graph) the graphs of the last k2 steps, but optimizer.step() rewrites self.lin.weight in place after every k1 steps, so the next window's backward through an older step hits the Linear weight saved at an older version.
# source: https://discuss.pytorch.org/t/implementing-truncated-backpropagation-through-time/15500
import torch
import torch.nn as nn

torch.manual_seed(0)

seq_len = 8
layer_size = 6


class TBPTT():
    def __init__(self, one_step_module, loss_module, k1, k2, optimizer):
        self.one_step_module = one_step_module
        self.loss_module = loss_module
        self.k1 = k1
        self.k2 = k2
        self.retain_graph = k1 < k2
        self.optimizer = optimizer

    def train(self, input_sequence, init_state):
        states = [(None, init_state)]
        for j, (inp, target) in enumerate(input_sequence):
            state = states[-1][1].detach()
            state.requires_grad = True
            output, new_state = self.one_step_module(inp, state)
            states.append((state, new_state))

            while len(states) > self.k2:
                # Delete stuff that is too old
                del states[0]

            if (j + 1) % self.k1 == 0:
                loss = self.loss_module(output, target)

                self.optimizer.zero_grad()
                # backprop last module (keep graph only if they ever overlap)
                loss.backward(retain_graph=self.retain_graph)
                for i in range(self.k2 - 1):
                    # if we get all the way back to the "init_state", stop
                    if states[-i - 2][0] is None:
                        break
                    curr_grad = states[-i - 1][0].grad
                    states[-i - 2][1].backward(curr_grad, retain_graph=self.retain_graph)
                self.optimizer.step()  # <-- IPL001


class MyMod(nn.Module):
    def __init__(self):
        super(MyMod, self).__init__()
        self.lin = nn.Linear(2 * layer_size, 2 * layer_size)

    def forward(self, inp, state):
        full_out = self.lin(torch.cat([inp, state], 1))
        out = full_out.narrow(1, 0, layer_size)
        new_state = full_out.narrow(1, layer_size, layer_size)
        return out, new_state


def main():
    one_step_module = MyMod()
    loss_module = nn.MSELoss()
    input_sequence = [(torch.rand(1, layer_size), torch.rand(1, layer_size)) for _ in range(seq_len)]
    optimizer = torch.optim.SGD(one_step_module.parameters(), lr=1e-2)
    runner = TBPTT(one_step_module, loss_module, k1=2, k2=3, optimizer=optimizer)
    runner.train(input_sequence, torch.zeros(1, layer_size))


main()
