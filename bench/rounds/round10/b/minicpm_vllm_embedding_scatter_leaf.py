# label: hazard raises
# why: with LoRA + gradient checkpointing, enable_input_require_grads turns the frozen embed_tokens output into a leaf that requires grad, and get_vllm_embedding then scatters the image features into a row view of it in place.
# source: https://github.com/OpenBMB/MiniCPM-V/issues/730
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyLLM(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, hidden)
        self.model.layer = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.config = type("Config", (), {})()

    def forward(self, inputs_embeds):
        return self.lm_head(torch.tanh(self.model.layer(inputs_embeds)))


class LoraLinear(nn.Module):
    def __init__(self, base, r=2):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.1)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class MiniCPMV(nn.Module):
    def __init__(self):
        super().__init__()
        self.llm = TinyLLM()
        self.vpm = nn.Linear(6, 8)
        self.resampler = nn.Linear(8, 8)

    def get_vision_hidden_states(self, data):
        return [self.resampler(self.vpm(pixel_values)) for pixel_values in data["pixel_values"]]

    def get_vllm_embedding(self, data):
        vision_hidden_states = self.get_vision_hidden_states(data)
        if hasattr(self.llm.config, "scale_emb"):
            vllm_embedding = self.llm.model.embed_tokens(data["input_ids"]) * self.llm.config.scale_emb
        else:
            vllm_embedding = self.llm.model.embed_tokens(data["input_ids"])
        vision_hidden_states = [i.type(vllm_embedding.dtype) if isinstance(i, torch.Tensor) else i
                                for i in vision_hidden_states]
        bs = len(data["input_ids"])
        for i in range(bs):
            cur_vs_hs = vision_hidden_states[i]
            if len(cur_vs_hs) > 0:
                cur_vllm_emb = vllm_embedding[i]
                cur_image_bound = data["image_bound"][i]
                if len(cur_image_bound) > 0:
                    image_indices = torch.stack([torch.arange(r[0], r[1], dtype=torch.long) for r in cur_image_bound])
                    cur_vllm_emb.scatter_(  # <-- IPL003: row view of the leaf embedding output that requires grad
                        0,
                        image_indices.view(-1, 1).repeat(1, cur_vllm_emb.shape[-1]),
                        cur_vs_hs.view(-1, cur_vs_hs.shape[-1]),
                    )
        return vllm_embedding, vision_hidden_states

    def forward(self, data):
        vllm_embedding, _ = self.get_vllm_embedding(data)
        return self.llm(inputs_embeds=vllm_embedding)


def enable_input_require_grads(model):
    def make_inputs_require_grads(module, input, output):
        output.requires_grad_(True)
    return model.llm.model.embed_tokens.register_forward_hook(make_inputs_require_grads)


model = MiniCPMV()
for p in model.parameters():
    p.requires_grad_(False)
model.llm.model.layer = LoraLinear(model.llm.model.layer)
hook = enable_input_require_grads(model)
data = {
    "input_ids": torch.tensor([[1, 2, 0, 0, 5, 6], [3, 0, 0, 4, 7, 8]]),
    "pixel_values": [torch.randn(2, 6), torch.randn(2, 6)],
    "image_bound": [torch.tensor([[2, 4]]), torch.tensor([[1, 3]])],
}
labels = torch.tensor([[2, -100, -100, 5, 6, 9], [-100, -100, 4, 7, 8, 9]])
logits = model(data)
loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
loss.backward()
