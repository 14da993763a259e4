# label: hazard raises
# why: DiffusionPriorNetwork.forward swaps padded text tokens for the learned null embedding with torch.where(mask[..., None], ...), whose backward keeps the condition, and then applies classifier-free-guidance dropout with `mask &= keep_mask`, rewriting that saved condition in place (the upstream hack was to pass a .clone() of the mask to torch.where).
# source: https://github.com/lucidrains/DALLE2-pytorch/commit/f9882077188e9846ebf67bd78b2f8621754232ab (dalle2_pytorch/dalle2_pytorch.py DiffusionPriorNetwork.forward, "hack around some inplace error")
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def exists(val):
    return val is not None


def prob_mask_like(shape, prob, device):
    if prob == 1:
        return torch.ones(shape, device=device, dtype=torch.bool)
    elif prob == 0:
        return torch.zeros(shape, device=device, dtype=torch.bool)
    else:
        return torch.zeros(shape, device=device).float().uniform_(0, 1) < prob


class DiffusionPriorNetwork(nn.Module):
    def __init__(self, dim, num_timesteps=100, max_text_len=8, depth=2, heads=2):
        super().__init__()
        self.num_time_embeds = 1
        self.num_image_embeds = 1
        self.num_text_embeds = 1
        self.to_text_embeds = nn.Linear(dim, dim)
        self.to_image_embeds = nn.Linear(dim, dim)
        self.to_time_embeds = nn.Embedding(num_timesteps, dim)
        self.learned_query = nn.Parameter(torch.randn(dim))
        self.max_text_len = max_text_len
        self.null_text_embed = nn.Parameter(torch.randn(1, max_text_len, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True)
        self.causal_transformer = nn.TransformerEncoder(layer, depth)

    def forward(self, image_embed, diffusion_timesteps, *, text_embed, text_encodings=None, cond_drop_prob=0.):
        batch, dim, device, dtype = *image_embed.shape, image_embed.device, image_embed.dtype
        num_time_embeds, num_image_embeds, num_text_embeds = self.num_time_embeds, self.num_image_embeds, self.num_text_embeds

        text_embed = self.to_text_embeds(text_embed).unsqueeze(1)
        image_embed = self.to_image_embeds(image_embed).unsqueeze(1)

        if not exists(text_encodings):
            text_encodings = torch.empty((batch, 0, dim), device=device, dtype=dtype)

        mask = torch.any(text_encodings != 0., dim=-1)

        # replace any padding in the text encodings with learned padding tokens unique across position
        text_encodings = text_encodings[:, :self.max_text_len]
        mask = mask[:, :self.max_text_len]

        text_len = text_encodings.shape[-2]
        remainder = self.max_text_len - text_len

        if remainder > 0:
            text_encodings = F.pad(text_encodings, (0, 0, 0, remainder), value=0.)
            mask = F.pad(mask, (0, remainder), value=False)

        null_text_embeds = self.null_text_embed.to(text_encodings.dtype)

        text_encodings = torch.where(
            mask.unsqueeze(-1),  # rearrange(mask, 'b n -> b n 1')
            text_encodings,
            null_text_embeds
        )

        # classifier free guidance
        keep_mask = prob_mask_like((batch,), 1 - cond_drop_prob, device=device)
        keep_mask = keep_mask.unsqueeze(-1)  # rearrange(keep_mask, 'b -> b 1')

        mask &= keep_mask  # <-- IPL001: in-place AND on the mask whose view torch.where saved as its condition

        keep_mask = keep_mask.expand(batch, num_text_embeds)  # repeat(keep_mask, 'b 1 -> b n', n = num_text_embeds)
        mask = torch.cat((mask, keep_mask), dim=1)
        attend_padding = 1 + num_time_embeds + num_image_embeds
        mask = F.pad(mask, (0, attend_padding), value=True)

        time_embed = self.to_time_embeds(diffusion_timesteps).unsqueeze(1)
        learned_queries = self.learned_query.expand(batch, 1, dim)

        tokens = torch.cat((text_encodings, text_embed, time_embed, image_embed, learned_queries), dim=-2)
        tokens = self.causal_transformer(tokens, src_key_padding_mask=~mask)
        return tokens[..., -1, :]


dim = 16
net = DiffusionPriorNetwork(dim)
opt = torch.optim.Adam(net.parameters(), lr=1e-4)
batch = 3
image_embed = torch.randn(batch, dim)
noise = torch.randn_like(image_embed)
times = torch.randint(0, 100, (batch,))
alpha = torch.rand(batch, 1)
noised_image_embed = alpha.sqrt() * image_embed + (1 - alpha).sqrt() * noise
text_embed = torch.randn(batch, dim)
text_encodings = torch.randn(batch, 5, dim)
text_encodings[1, 3:] = 0.  # padded tokens
pred = net(noised_image_embed, times, text_embed=text_embed, text_encodings=text_encodings, cond_drop_prob=0.2)
loss = F.mse_loss(pred, image_embed)
opt.zero_grad()
loss.backward()
opt.step()
