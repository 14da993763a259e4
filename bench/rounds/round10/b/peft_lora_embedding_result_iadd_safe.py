# label: safe
# why: LoRA Embedding adds the low-rank update into `result` with +=, but embedding's backward saves only the indices, so the in-place add on its output is harmless.
# source: https://github.com/huggingface/peft/pull/1372
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoraEmbedding(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, r=4, lora_alpha=8):
        super().__init__()
        self.base_layer = nn.Embedding(num_embeddings, embedding_dim)
        self.base_layer.weight.requires_grad_(False)
        self.lora_embedding_A = nn.ParameterDict(
            {"default": nn.Parameter(torch.randn(r, num_embeddings) * 0.1)})
        self.lora_embedding_B = nn.ParameterDict(
            {"default": nn.Parameter(torch.randn(embedding_dim, r) * 0.1)})
        self.scaling = {"default": lora_alpha / r}
        self.active_adapters = ["default"]

    def _embed(self, input, weight):
        base_layer = self.base_layer
        return F.embedding(input, weight, padding_idx=base_layer.padding_idx,
                           max_norm=base_layer.max_norm)

    def forward(self, x):
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            embedding_A = self.lora_embedding_A[active_adapter].T
            embedding_B = self.lora_embedding_B[active_adapter].T
            scaling = self.scaling[active_adapter]
            after_A = self._embed(x, embedding_A)
            result += (after_A @ embedding_B) * scaling
        return result


model = LoraEmbedding(20, 8)
input_ids = torch.tensor([[1, 4, 7, 2], [3, 3, 9, 0]])
out = model(input_ids)
loss = out.pow(2).mean()
loss.backward()
grad_A = model.lora_embedding_A["default"].grad
grad_B = model.lora_embedding_B["default"].grad
