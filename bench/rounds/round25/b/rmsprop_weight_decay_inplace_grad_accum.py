# label: hazard silent
# why: the proposed RMSprop change adds weight decay with grad.add_(weight_decay, p.data) on grad = p.grad.data, so with gradient accumulation (no zero_grad between micro-batches) the decay term is written into p.grad and re-accumulated by every later backward and step.
# source: https://github.com/pytorch/pytorch/pull/18732
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay)
        super(RMSprop, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['square_avg'] = torch.zeros_like(p.data)
                square_avg = state['square_avg']
                alpha = group['alpha']
                state['step'] += 1
                if group['weight_decay'] != 0:
                    grad.add_(p.data, alpha=group['weight_decay'])  # <-- IPL002
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                avg = square_avg.sqrt().add_(group['eps'])
                p.data.addcdiv_(grad, avg, value=-group['lr'])
        return loss


class CharRNN(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


def main():
    model = CharRNN()
    optimizer = RMSprop(model.parameters(), lr=1e-2, weight_decay=0.1)
    accumulation_steps = 2
    optimizer.zero_grad()
    for it in range(4):
        tokens = torch.randint(0, 12, (4, 7))
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 12), tokens[:, 1:].reshape(-1)) / accumulation_steps
        loss.backward()
        # step every micro-batch, but only clear gradients once per accumulation window
        optimizer.step()
        if (it + 1) % accumulation_steps == 0:
            optimizer.zero_grad()
    return model.head.weight.detach().clone(), model.embed.weight.detach().clone()


head_weight, embed_weight = main()
