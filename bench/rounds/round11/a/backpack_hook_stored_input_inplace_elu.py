# label: hazard silent
# why: the curvature extension stores each activation's input in a forward hook and later evaluates the ELU derivative on it, but ELU(inplace=True) has already overwritten that stored input with its output.
# source: https://github.com/f-dangel/backpack/pull/59
import torch
import torch.nn as nn

torch.manual_seed(0)


class DiagGGNExtension:
    """Backpropagates the square-root GGN factor through the network, BackPACK style."""

    def __init__(self, model):
        self.model = model
        for module in model.modules():
            if module is not model:
                module.register_forward_hook(self.store_io)

    @staticmethod
    def store_io(module, input, output):
        module.input0 = input[0]
        module.output = output

    @staticmethod
    def elu_derivative(module, x):
        alpha = module.alpha
        return torch.where(x > 0, torch.ones_like(x), alpha * torch.exp(x))

    def diag_ggn(self, x, y):
        logits = self.model(x)
        probs = logits.softmax(-1).detach()
        # square root of the cross-entropy Hessian w.r.t. the logits
        sqrt_h = torch.diag_embed(probs.sqrt()) - probs[:, :, None] * probs.sqrt()[:, None, :]
        results = {}
        backproped = sqrt_h  # (N, C_out, C)
        for module in reversed(list(self.model.children())):
            if isinstance(module, nn.Linear):
                x_in = module.input0.detach()
                results[module] = torch.einsum("noc,ni->oi", backproped ** 2, x_in ** 2)
                backproped = torch.einsum("noc,oi->nic", backproped, module.weight.detach())
            elif isinstance(module, nn.ELU):
                jac = self.elu_derivative(module, module.input0.detach())
                backproped = backproped * jac[:, :, None]
        return results


model = nn.Sequential(
    nn.Linear(5, 6),
    nn.ELU(alpha=1.0, inplace=True),  # <-- IPL002: overwrites the input the forward hook stored for the Jacobian
    nn.Linear(6, 3),
)
ext = DiagGGNExtension(model)
x = torch.randn(4, 5)
y = torch.randint(0, 3, (4,))
diag = ext.diag_ggn(x, y)
diag_ggn_first = diag[model[0]]
diag_ggn_last = diag[model[2]]
