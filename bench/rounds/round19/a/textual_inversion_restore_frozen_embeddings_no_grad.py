# label: safe
# why: after optimizer.step() the original token embeddings are copied back into the embedding weight rows inside torch.no_grad(), so the in-place write touches a leaf only outside autograd and after its graph was consumed.
# source: https://github.com/huggingface/diffusers/pull/1665
import torch
import torch.nn as nn

torch.manual_seed(0)


class CLIPTextModel(nn.Module):
    def __init__(self, vocab_size=12, embed_dim=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, embed_dim)
        self.encoder = nn.TransformerEncoderLayer(embed_dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)

    def get_input_embeddings(self):
        return self.token_embedding

    def forward(self, input_ids):
        return self.encoder(self.token_embedding(input_ids))


class TinyUNet(nn.Module):
    def __init__(self, embed_dim=8):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.cond = nn.Linear(embed_dim, 4)

    def forward(self, latents, timesteps, encoder_hidden_states):
        c = self.cond(encoder_hidden_states.mean(1))[:, :, None, None]
        return self.conv(latents) + c * (timesteps[:, None, None, None].float() / 1000.0)


text_encoder = CLIPTextModel()
unet = TinyUNet()
unet.requires_grad_(False)
for p in text_encoder.encoder.parameters():
    p.requires_grad_(False)
placeholder_token_id = 11
optimizer = torch.optim.AdamW(text_encoder.get_input_embeddings().parameters(), lr=5e-2, weight_decay=1e-2)

# keep original embeddings as reference
orig_embeds_params = text_encoder.get_input_embeddings().weight.data.clone()

input_ids = torch.tensor([[1, 4, 11, 2], [3, 11, 5, 0]])
for step in range(3):
    latents = torch.randn(2, 4, 4, 4)
    noise = torch.randn_like(latents)
    timesteps = torch.randint(0, 1000, (2,))
    noisy_latents = latents + noise * 0.5
    encoder_hidden_states = text_encoder(input_ids)
    model_pred = unet(noisy_latents, timesteps, encoder_hidden_states)
    loss = nn.functional.mse_loss(model_pred, noise)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

    # Let's make sure we don't update any embedding weights besides the newly added token
    index_no_updates = torch.arange(12) != placeholder_token_id
    with torch.no_grad():
        text_encoder.get_input_embeddings().weight[index_no_updates] = orig_embeds_params[index_no_updates]

learned_embeds = text_encoder.get_input_embeddings().weight[placeholder_token_id].detach()
final_loss = loss.detach()
