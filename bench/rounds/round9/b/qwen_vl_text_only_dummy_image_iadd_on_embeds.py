# label: hazard raises
# why: for text-only batches the template runs a dummy image through the vision tower and adds `image_embeds.mean() * 0.` into inputs_embeds with +=; with frozen input embeddings whose output is made to require grad (LoRA + gradient checkpointing) inputs_embeds is a leaf that requires grad.
# source: https://github.com/modelscope/ms-swift/issues/4613
import torch
import torch.nn as nn

torch.manual_seed(0)


class VisionTower(nn.Module):
    def __init__(self, patch_dim=12, hidden=8):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, hidden)
        self.merger = nn.Linear(hidden, hidden)

    def get_dtype(self):
        return self.patch_embed.weight.dtype

    def forward(self, pixel_values, grid_thw=None):
        return self.merger(torch.nn.functional.gelu(self.patch_embed(pixel_values)))


class LanguageModel(nn.Module):
    def __init__(self, vocab=32, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.lm_head = nn.Linear(hidden, vocab)


class Qwen2VLForConditionalGeneration(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = VisionTower()
        self.model = LanguageModel()

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.model.embed_tokens.register_forward_hook(make_inputs_require_grads)


class Qwen2VLTemplate:
    def _post_encode(self, model, inputs):
        input_ids = inputs["input_ids"]
        pixel_values = inputs.get("pixel_values")
        inputs_embeds = model.model.embed_tokens(input_ids)
        if pixel_values is None:
            # plain-text batch: run a dummy image so every rank touches the vision tower (DeepSpeed)
            dummy = torch.zeros(4, 12).type(model.visual.get_dtype())
            image_embeds = model.visual(dummy, grid_thw=torch.tensor([[1, 2, 2]]))
            inputs_embeds += image_embeds.mean() * 0.0  # <-- IPL003: inputs_embeds is the hooked leaf output of the frozen embedding
        return {"inputs_embeds": inputs_embeds}


model = Qwen2VLForConditionalGeneration()
for p in model.model.embed_tokens.parameters():
    p.requires_grad_(False)
model.enable_input_require_grads()
template = Qwen2VLTemplate()
batch = {"input_ids": torch.tensor([[3, 8, 15, 4]]), "labels": torch.tensor([[8, 15, 4, 2]])}
embeds = template._post_encode(model, batch)["inputs_embeds"]
logits = model.model.lm_head(model.model.layers(embeds))
loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
loss.backward()
