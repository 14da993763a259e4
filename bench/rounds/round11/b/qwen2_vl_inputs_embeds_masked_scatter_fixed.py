# label: safe
# why: the image features are merged with the out-of-place masked_scatter, so the leaf embeddings produced under enable_input_require_grads are never written in place.
# source: https://github.com/huggingface/optimum-habana/pull/1970
import torch
import torch.nn as nn

torch.manual_seed(0)


class VisionTower(nn.Module):
    def __init__(self, patch_dim=6, hidden=8):
        super().__init__()
        self.proj = nn.Linear(patch_dim, hidden)
        self.merger = nn.Sequential(nn.GELU(), nn.Linear(hidden, hidden))

    def forward(self, pixel_values):
        return self.merger(self.proj(pixel_values))


class Qwen2VLForConditionalGeneration(nn.Module):
    def __init__(self, vocab=32, hidden=8, image_token_id=31):
        super().__init__()
        self.image_token_id = image_token_id
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.visual = VisionTower(hidden=hidden)
        self.layers = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, pixel_values=None, labels=None):
        inputs_embeds = self.embed_tokens(input_ids)
        if pixel_values is not None:
            image_embeds = self.visual(pixel_values)
            image_mask = (input_ids == self.image_token_id).unsqueeze(-1).expand_as(inputs_embeds)
            image_embeds = image_embeds.to(inputs_embeds.device, inputs_embeds.dtype)
            inputs_embeds = inputs_embeds.masked_scatter(image_mask, image_embeds)
        hidden_states = self.layers(inputs_embeds)
        logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return loss, logits


model = Qwen2VLForConditionalGeneration()
model.embed_tokens.weight.requires_grad_(False)
model.enable_input_require_grads()

input_ids = torch.tensor([[1, 31, 31, 5, 6, 7], [2, 3, 31, 31, 8, 9]])
pixel_values = torch.randn(4, 6)
labels = input_ids.clone()
loss, logits = model(input_ids, pixel_values=pixel_values, labels=labels)
loss.backward()
