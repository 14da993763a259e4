# label: hazard raises no-twin
# why: on pipeline ranks other than 0 the constructor zeroes the relative-position-embedding weight with `.fill_(0)` directly on the nn.Parameter while grad mode is on, an in-place write to a leaf that requires grad.
# source: https://github.com/NVIDIA/NeMo/commit/9b7a9ee52cea733f637894866f9ff361b20060c6
import torch
import torch.nn as nn

torch.manual_seed(0)


class parallel_state:
    """Stand-in for megatron.core.parallel_state on pipeline stage 1."""

    @staticmethod
    def get_pipeline_model_parallel_rank():
        return 1


def init_method_normal(sigma):
    def init_(tensor):
        return nn.init.normal_(tensor, mean=0.0, std=sigma)
    return init_


class T5RelativePositionEmbedding(nn.Module):
    def __init__(self, init_method, num_attention_heads, relative_position_num_buckets=32,
                 relative_position_max_distance=128, bidirectional=True):
        super().__init__()
        self.relative_position_num_buckets = relative_position_num_buckets
        self.relative_position_max_distance = relative_position_max_distance
        self.bidirectional = bidirectional
        self.relative_position_embedding = nn.Embedding(relative_position_num_buckets, num_attention_heads)
        init_method(self.relative_position_embedding.weight)

    def forward(self, query_seq_length, key_seq_length):
        context = torch.arange(query_seq_length)[:, None]
        memory = torch.arange(key_seq_length)[None, :]
        relative_position = (memory - context).abs().clamp(max=self.relative_position_num_buckets - 1)
        values = self.relative_position_embedding(relative_position)
        return values.permute(2, 0, 1).unsqueeze(0)


class MegatronTokenLevelEncoderDecoderModule(nn.Module):
    def __init__(self, vocab_size=32, hidden_size=16, num_attention_heads=2,
                 encoder_position_embedding_type='relative', embedding_init_method_std=0.02):
        super().__init__()
        self.encoder_embedding = nn.Embedding(vocab_size, hidden_size)
        if encoder_position_embedding_type == 'relative':
            self.encoder_relative_position_embedding = T5RelativePositionEmbedding(
                init_method=init_method_normal(embedding_init_method_std),
                num_attention_heads=num_attention_heads,
                relative_position_num_buckets=8,
                bidirectional=True,
            )
            # Pipeline model parallel rank 0 will have the actual RPE weights.
            # We zero it out on all other ranks and then sync them on setup.
            if parallel_state.get_pipeline_model_parallel_rank() != 0:
                self.encoder_relative_position_embeddings_weight().fill_(0)  # <-- IPL003
                self.encoder_relative_position_embeddings_weight().shared = True
        self.encoder = nn.Linear(hidden_size, hidden_size)

    def encoder_relative_position_embeddings_weight(self):
        return self.encoder_relative_position_embedding.relative_position_embedding.weight

    def forward(self, enc_input_ids):
        x = self.encoder_embedding(enc_input_ids)
        bias = self.encoder_relative_position_embedding(x.size(1), x.size(1))
        scores = torch.einsum('bqd,bkd->bqk', x, x).unsqueeze(1) + bias
        attn = torch.softmax(scores, dim=-1).mean(1)
        return self.encoder(attn @ x)


def main():
    model = MegatronTokenLevelEncoderDecoderModule()
    tokens = torch.randint(0, 32, (2, 6))
    out = model(tokens)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), model.encoder_relative_position_embeddings_weight().grad


loss, rpe_grad = main()
