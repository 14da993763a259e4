# label: hazard raises
# why: with a frozen embedding and enable_input_require_grads, the forward hook turns the embedding output into a leaf that requires grad, and index_copy_ through its flat view is an in-place op on a view of that leaf
# source: https://github.com/2U1/Qwen-VL-Series-Finetune/pull/178
import torch
import torch.nn as nn

torch.manual_seed(0)

IMAGE_TOKEN_ID = 5


class VisionTower(nn.Module):
    def __init__(self, patch_dim=6, hidden=8):
        super().__init__()
        self.proj = nn.Linear(patch_dim, hidden)

    def forward(self, pixel_values):
        return self.proj(pixel_values)


class LoRALinear(nn.Module):
    def __init__(self, base, r=2):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.1)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class TinyVLM(nn.Module):
    def __init__(self, vocab=8, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.visual = VisionTower(hidden=hidden)
        self.layer = LoRALinear(nn.Linear(hidden, hidden))
        self.lm_head = nn.Linear(hidden, vocab)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.embed_tokens.register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, pixel_values):
        inputs_embeds = self.embed_tokens(input_ids)
        img = self.visual(pixel_values).to(inputs_embeds.dtype)
        b, t, d = inputs_embeds.shape
        flat = inputs_embeds.view(-1, d)
        row_idx = (input_ids == IMAGE_TOKEN_ID).view(-1).nonzero(as_tuple=True)[0]
        flat.index_copy_(0, row_idx, img)  # <-- IPL003: in-place write through a view of the hooked leaf embedding output
        inputs_embeds = flat.view(b, t, d)
        hidden = torch.relu(self.layer(inputs_embeds))
        return self.lm_head(hidden)


model = TinyVLM()
for name, p in model.named_parameters():
    if "lora_" not in name and "visual" not in name:
        p.requires_grad_(False)
model.enable_input_require_grads()

input_ids = torch.tensor([[1, 5, 5, 2, 3], [5, 2, 4, 5, 1]])
pixel_values = torch.randn(int((input_ids == IMAGE_TOKEN_ID).sum()), 6)
logits = model(input_ids, pixel_values)
loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 8), input_ids[:, 1:].reshape(-1))
loss.backward()
