# label: hazard raises
# why: in encode_with_transformer the word-embedding output comes from Megatron's _ReduceFromModelParallelRegion, a custom autograd Function that returns its input as-is (tensor-parallel size 1), so autograd treats it as a view created inside a custom Function and the in-place x += position_embeddings is refused when the text encoder is trained.
# source: https://github.com/NVIDIA/NeMo/commit/074019248db8928beaac0a1156f1ebe2b744514b (PR #8825)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_tensor_model_parallel_world_size():
    return 1


def _reduce(input_):
    """All-reduce the input tensor across model parallel group."""
    # Bypass the function if we are using only 1 GPU.
    if get_tensor_model_parallel_world_size() == 1:
        return input_
    raise NotImplementedError


class _ReduceFromModelParallelRegion(torch.autograd.Function):
    """All-reduce the input from the model parallel region."""

    @staticmethod
    def forward(ctx, input_):
        return _reduce(input_)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def reduce_from_tensor_model_parallel_region(input_):
    return _ReduceFromModelParallelRegion.apply(input_)


class VocabParallelEmbedding(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, embedding_dim) * 0.02)

    def forward(self, input_):
        output_parallel = F.embedding(input_, self.weight)
        output = reduce_from_tensor_model_parallel_region(output_parallel)
        return output


class Embedding(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_sequence_length):
        super().__init__()
        self.word_embeddings = VocabParallelEmbedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Parameter(torch.randn(max_sequence_length, hidden_size) * 0.01)


class ParallelTransformerLayer(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.GELU(), nn.Linear(4 * hidden_size, hidden_size))

    def forward(self, hidden_states, attention_mask=None):
        return hidden_states + self.mlp(self.input_layernorm(hidden_states))


class LanguageModel(nn.Module):
    def __init__(self, vocab_size=32, hidden_size=16, max_sequence_length=8, num_layers=2):
        super().__init__()
        self.embedding = Embedding(vocab_size, hidden_size, max_sequence_length)
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList([ParallelTransformerLayer(hidden_size) for _ in range(num_layers)])
        self.encoder.final_layernorm = nn.LayerNorm(hidden_size)


class MegatronCLIPTextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.language_model = LanguageModel()
        self.attn_mask = None


class FrozenMegatronCLIPEmbedder(nn.Module):
    def __init__(self, layer="last"):
        super().__init__()
        self.model = MegatronCLIPTextModel()
        self.layer_idx = 0 if layer == "last" else 1
        self.return_pooled = False

    def forward(self, text):
        return self.encode_with_transformer(text)

    def encode_with_transformer(self, text):
        x = self.model.language_model.embedding.word_embeddings(text)
        x += self.model.language_model.embedding.position_embeddings  # <-- IPL001
        x = x.permute(1, 0, 2)  # NLD -> LND
        x = self.text_transformer_forward(x, attn_mask=self.model.attn_mask)
        x = self.model.language_model.encoder.final_layernorm(x)
        x = x.permute(1, 0, 2)  # LND -> NLD
        return x, None

    def text_transformer_forward(self, x: torch.Tensor, attn_mask=None):
        for i, r in enumerate(self.model.language_model.encoder.layers):
            if i == len(self.model.language_model.encoder.layers) - self.layer_idx:
                break
            x = r(x, attn_mask)
        return x


def main():
    cond_stage_model = FrozenMegatronCLIPEmbedder()
    unet_proj = nn.Linear(16, 4)
    text = torch.randint(0, 32, (2, 8))
    cond, _ = cond_stage_model(text)
    noise_pred = unet_proj(cond)
    loss = F.mse_loss(noise_pred, torch.randn_like(noise_pred))
    loss.backward()
    return loss.detach(), cond_stage_model.model.language_model.embedding.position_embeddings.grad


loss, pos_grad = main()
