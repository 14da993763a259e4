# label: hazard silent
# why: probs = router_logits.sigmoid_() turns router_logits into probabilities, so the z-loss that reads router_logits afterwards regularises probabilities instead of logits.
import torch
import torch.nn as nn

torch.manual_seed(0)


class SigmoidRouter(nn.Module):
    def __init__(self, d, n_experts):
        super().__init__()
        self.w = nn.Linear(d, n_experts, bias=False)

    def forward(self, x):
        router_logits = self.w(x)
        probs = router_logits.sigmoid_()  # <-- IPL002: router_logits is read again below
        z_loss = torch.logsumexp(router_logits, dim=-1).pow(2).mean()
        top_p, top_i = probs.topk(2, dim=-1)
        return top_p, top_i, z_loss


router = SigmoidRouter(8, 4)
tokens = torch.randn(10, 8)
weights, experts, aux = router(tokens)
(weights.sum() + 0.01 * aux).backward()
