# label: safe
# why: in the normal training path scatter_vision_embeds writes vision features into the fresh output of tok_embeddings; EmbeddingBackward saves only the token indices and nothing else holds that tensor, so the in-place slice assignment keeps correct gradients for both the embedding table and the vision encoder.
# source: https://github.com/pytorch/torchtitan/commit/51b70076d33c03d25a47597e6cff17ed459db70a (pre-change KimiK3Model path)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_vision_positions(tokens, num_tokens_per_item, image_id):
    positions = []
    is_image = (tokens == image_id).tolist()
    start = None
    for i, flag in enumerate(is_image + [False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            positions.append((len(positions), start, i - start))
            start = None
    assert [n for _, _, n in positions] == list(num_tokens_per_item)
    return positions


def scatter_vision_embeds(inputs_embeds, *, vision_embeds, vision_positions):
    """Copy packed vision features into the text sequence at placeholder runs (in place)."""
    vision_offset = 0
    for _, vision_start, num_tokens in vision_positions:
        inputs_embeds[vision_start: vision_start + num_tokens] = vision_embeds[
            vision_offset: vision_offset + num_tokens
        ].to(inputs_embeds.dtype)
        vision_offset += num_tokens
    if vision_offset != vision_embeds.shape[0]:
        raise ValueError("Vision placeholder runs do not match the packed vision output.")
    return inputs_embeds


class KimiK3Model(nn.Module):
    IMAGE_ID = 3

    def __init__(self, vocab_size=16, dim=8, patch_dim=12):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.vision_encoder = nn.Sequential(nn.Linear(patch_dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.layers = nn.ModuleList([nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim)) for _ in range(2)])
        self.output = nn.Linear(dim, vocab_size)

    def _embed(self, tokens, pixel_values, num_tokens_per_item):
        embeddings = self.tok_embeddings(tokens)
        vision_embeds = self.vision_encoder(pixel_values)
        vision_positions = get_vision_positions(tokens, num_tokens_per_item, self.IMAGE_ID)
        return scatter_vision_embeds(embeddings, vision_embeds=vision_embeds, vision_positions=vision_positions)

    def forward(self, tokens, pixel_values, num_tokens_per_item):
        h = self._embed(tokens, pixel_values, num_tokens_per_item)
        for layer in self.layers:
            h = h + layer(h)
        return self.output(h)


def main():
    model = KimiK3Model()
    tokens = torch.tensor([5, 3, 3, 7, 8, 3, 3, 3, 9, 1])
    pixel_values = torch.randn(5, 12)
    logits = model(tokens, pixel_values, [2, 3])
    loss = F.cross_entropy(logits[:-1], tokens[1:])
    loss.backward()
    return loss.detach(), model.tok_embeddings.weight.grad, model.vision_encoder[0].weight.grad


loss, tok_grad, vis_grad = main()
