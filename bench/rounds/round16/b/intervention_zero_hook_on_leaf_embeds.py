# label: hazard raises
# why: in eval mode the embedding dropout returns its input as-is, so the intervention hook's output[:, pos] = 0 writes into a view of the leaf inputs_embeds that requires grad for attribution
# source: https://github.com/ndif-team/nnsight/pull/126 (zero intervention reimplemented out of place; see discuss.pytorch.org/t/post-processing-model-output-while-retaining-gradients/181602)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyGPT(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(0.1)
        self.block = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.wte(input_ids)
        hidden = self.drop(inputs_embeds)
        hidden = hidden + self.block(hidden)
        return self.lm_head(hidden)


class Intervention:
    """Zero the residual stream at one position by editing the module output in place."""

    def __init__(self, position):
        self.position = position

    def __call__(self, module, inputs, output):
        output[:, self.position] = 0  # <-- IPL003: the eval-mode dropout output is the leaf inputs_embeds itself
        return output


model = TinyGPT().eval()
input_ids = torch.tensor([[3, 7, 1, 9]])
inputs_embeds = model.wte(input_ids).detach().requires_grad_(True)
handle = model.drop.register_forward_hook(Intervention(position=2))
logits = model(inputs_embeds=inputs_embeds)
handle.remove()
target_logit = logits[0, -1, 5]
target_logit.backward()
attribution = (inputs_embeds.grad * inputs_embeds).sum(-1)
