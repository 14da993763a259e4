# label: hazard raises
# why: the inner-loop update writes theta - lr * grad into a preallocated fast-weight buffer with out=; out= variants are not differentiable, so with create_graph=True gradients the call raises
# source: https://github.com/pytorch/pytorch/issues/150181
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class MetaLearner:
    def __init__(self, n_in=3, n_hidden=8, n_out=2, inner_lr=0.1):
        self.params = {
            "w1": (torch.randn(n_hidden, n_in) * 0.3).requires_grad_(),
            "b1": torch.zeros(n_hidden, requires_grad=True),
            "w2": (torch.randn(n_out, n_hidden) * 0.3).requires_grad_(),
            "b2": torch.zeros(n_out, requires_grad=True),
        }
        self.inner_lr = inner_lr
        self.fast_buffers = {k: torch.empty_like(v) for k, v in self.params.items()}

    @staticmethod
    def functional_forward(x, weights):
        h = F.relu(F.linear(x, weights["w1"], weights["b1"]))
        return F.linear(h, weights["w2"], weights["b2"])

    def adapt(self, x_spt, y_spt):
        loss = F.cross_entropy(self.functional_forward(x_spt, self.params), y_spt)
        grads = torch.autograd.grad(loss, list(self.params.values()), create_graph=True)
        fast_weights = {}
        for (name, p), g in zip(self.params.items(), grads):
            fast_weights[name] = torch.add(p, g, alpha=-self.inner_lr, out=self.fast_buffers[name])  # <-- IPL001: out= write of a differentiable result into a preallocated buffer
        return fast_weights


learner = MetaLearner()
x_spt, y_spt = torch.randn(4, 3), torch.tensor([0, 1, 0, 1])
x_qry, y_qry = torch.randn(4, 3), torch.tensor([1, 1, 0, 0])
fast_weights = learner.adapt(x_spt, y_spt)
meta_loss = F.cross_entropy(MetaLearner.functional_forward(x_qry, fast_weights), y_qry)
meta_loss.backward()
