# label: hazard raises no-twin
# why: the trainable mapper's output is written into a row of the CLIP token-embedding weight, an in-place write into a view of a leaf parameter that requires grad, which autograd rejects.
# source: https://github.com/huggingface/diffusers/issues/3256
import torch
import torch.nn as nn

torch.manual_seed(0)


class CLIPTextEmbeddings(nn.Module):
    def __init__(self, vocab_size, embed_dim, max_positions):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, embed_dim)
        self.position_embedding = nn.Embedding(max_positions, embed_dim)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1])[None]
        return self.token_embedding(input_ids) + self.position_embedding(positions)


class CLIPTextModel(nn.Module):
    def __init__(self, vocab_size=20, embed_dim=8, max_positions=6):
        super().__init__()
        self.embeddings = CLIPTextEmbeddings(vocab_size, embed_dim, max_positions)
        self.encoder = nn.TransformerEncoderLayer(embed_dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)

    def get_input_embeddings(self):
        return self.embeddings.token_embedding

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))


class MyFunction(nn.Module):
    """Maps a small trainable code to the placeholder token embedding."""

    def __init__(self, code_dim, embed_dim):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(code_dim, embed_dim), nn.Tanh())

    def forward(self, code):
        return self.proj(code)


text_encoder = CLIPTextModel()
placeholder_token_id = 19
Trainable_Weight = nn.Parameter(torch.randn(4))
mapper = MyFunction(4, 8)
optimizer = torch.optim.AdamW(list(mapper.parameters()) + [Trainable_Weight], lr=5e-4)

input_ids = torch.tensor([[1, 5, 19, 7, 2, 0]])
target = torch.randn(1, 6, 8)

token_embedding = text_encoder.get_input_embeddings()
token_embedding.weight[placeholder_token_id] = mapper(Trainable_Weight)  # <-- IPL003: in-place write into a view of the leaf embedding weight
encoder_hidden_states = text_encoder(input_ids)
loss = nn.functional.mse_loss(encoder_hidden_states, target)
loss.backward()
optimizer.step()
