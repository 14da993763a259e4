# label: hazard silent
# why: _embed_boxes shifts the caller's box tensor with `boxes += 0.5`, so every repeated call on the same input_boxes drifts by another half pixel and gives different embeddings
# source: https://github.com/huggingface/transformers/pull/42173 (issue https://github.com/huggingface/transformers/issues/42172)
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Sam2PositionalEmbedding(nn.Module):
    def __init__(self, hidden_size=8, scale=1.0):
        super().__init__()
        self.scale = scale
        self.register_buffer("positional_embedding", self.scale * torch.randn((2, hidden_size // 2)))

    def forward(self, input_coords, input_shape=None):
        coordinates = input_coords.clone()
        if input_shape is not None:
            coordinates[:, :, :, 0] = coordinates[:, :, :, 0] / input_shape[1]
            coordinates[:, :, :, 1] = coordinates[:, :, :, 1] / input_shape[0]
        coordinates = coordinates.to(torch.float32)
        coordinates = 2 * coordinates - 1
        coordinates = coordinates.to(self.positional_embedding.dtype)
        coordinates = coordinates @ self.positional_embedding
        coordinates = 2 * np.pi * coordinates
        return torch.cat([torch.sin(coordinates), torch.cos(coordinates)], dim=-1)


class Sam2PromptEncoder(nn.Module):
    def __init__(self, hidden_size=8, image_size=64):
        super().__init__()
        self.shared_embedding = Sam2PositionalEmbedding(hidden_size)
        self.input_image_size = image_size
        self.point_embed = nn.Embedding(4, hidden_size)
        self.not_a_point_embed = nn.Embedding(1, hidden_size)

    def _embed_boxes(self, boxes: torch.Tensor) -> torch.Tensor:
        """Embeds box prompts."""
        boxes += 0.5  # <-- IPL004: shifts the caller's input_boxes in place
        coords = boxes.view(*boxes.shape[:2], 2, 2)
        # add padding point for consistency with the original implementation
        coords = torch.nn.functional.pad(coords, (0, 0, 0, 1), mode="constant", value=0)
        corner_embedding = self.shared_embedding(coords, (self.input_image_size, self.input_image_size))
        corner_embedding[:, :, 0, :] += self.point_embed.weight[2]
        corner_embedding[:, :, 1, :] += self.point_embed.weight[3]
        corner_embedding[:, :, 2, :] = self.not_a_point_embed.weight.expand_as(corner_embedding[:, :, 2, :])
        return corner_embedding

    def forward(self, input_boxes=None):
        sparse_embeddings = None
        if input_boxes is not None:
            box_embeddings = self._embed_boxes(input_boxes)
            sparse_embeddings = box_embeddings.flatten(2, 3) if sparse_embeddings is None else sparse_embeddings
        return sparse_embeddings


prompt_encoder = Sam2PromptEncoder()
input_boxes = torch.tensor([[[10.0, 12.0, 40.0, 50.0]]])  # batch x num_boxes x 4
first_run = prompt_encoder(input_boxes=input_boxes)
second_run = prompt_encoder(input_boxes=input_boxes)
loss = (first_run.sum() + second_run.sum())
loss.backward()
