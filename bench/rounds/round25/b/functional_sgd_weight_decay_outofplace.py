# label: safe no-twin
# why: torch.optim._functional.sgd rebinds d_p = d_p.add(param, alpha=weight_decay) so param.grad keeps the true gradient; the only in-place writes are to the momentum buffer and to the parameter under no_grad, which nothing differentiates through.
# source: https://github.com/pytorch/pytorch/issues/69189
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov):
    for i, param in enumerate(params):
        d_p = d_p_list[i]
        if weight_decay != 0:
            d_p = d_p.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = torch.clone(d_p).detach()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
            if nesterov:
                d_p = d_p.add(buf, alpha=momentum)
            else:
                d_p = buf
        param.add_(d_p, alpha=-lr)


class SGD(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            params_with_grad, d_p_list, momentum_buffer_list = [], [], []
            for p in group['params']:
                if p.grad is not None:
                    params_with_grad.append(p)
                    d_p_list.append(p.grad)
                    momentum_buffer_list.append(self.state[p].get('momentum_buffer'))
            sgd(params_with_grad, d_p_list, momentum_buffer_list,
                weight_decay=group['weight_decay'], momentum=group['momentum'], lr=group['lr'],
                dampening=group['dampening'], nesterov=group['nesterov'])
            for p, buf in zip(params_with_grad, momentum_buffer_list):
                self.state[p]['momentum_buffer'] = buf


class BagOfWordsClassifier(nn.Module):
    def __init__(self, vocab_size=50, embed_dim=8, num_labels=3):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_labels)

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


def main():
    model = BagOfWordsClassifier()
    optimizer = SGD(model.parameters(), lr=0.5, momentum=0.9, weight_decay=0.1)
    grad_norms = []
    for step in range(3):
        text = torch.randint(0, 50, (12,))
        offsets = torch.tensor([0, 4, 8])
        labels = torch.tensor([0, 1, 2])
        optimizer.zero_grad()
        loss = F.cross_entropy(model(text, offsets), labels)
        loss.backward()
        optimizer.step()
        grad_norms.append(torch.stack([p.grad.norm() for p in model.parameters()]).norm())
    return torch.stack(grad_norms), model.fc.weight.detach().clone()


grad_norms, fc_weight = main()
