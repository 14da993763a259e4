# label: safe
# why: After the fix, MeshAutoencoder.encode adds the per-sample face offset with `face_edges = face_edges + batch_offset`, so the caller's face_edges stays untouched and the README flow can call the autoencoder for the loss and then tokenize() with the same face_edges; discretize_coors scales only its own fresh tensor in place.
# source: https://github.com/lucidrains/meshgpt-pytorch/commit/bebb59cc6bfc386d8f4c16c8e7579d1295dd86c2
from typing import Tuple

import torch
from torch import nn, Tensor
from torch.nn import Module, ModuleList
import torch.nn.functional as F


# helper functions

def exists(v):
    return v is not None


def discretize_coors(
    t: Tensor,
    *,
    continuous_range: Tuple[float, float],
    num_discrete: int = 128
) -> Tensor:
    lo, hi = continuous_range
    assert hi > lo

    t = (t - lo) / (hi - lo)
    t *= num_discrete
    t -= 0.5

    return t.round().long().clamp(min = 0, max = num_discrete - 1)


class SAGEConv(Module):
    """Stand-in for torch_geometric.nn.conv.SAGEConv (mean aggregation)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = nn.Linear(in_channels, out_channels)
        self.lin_r = nn.Linear(in_channels, out_channels, bias = False)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        x_j = x.index_select(0, src)
        summed = torch.zeros_like(x).index_add(0, dst, x_j)
        count = torch.zeros(x.shape[0], device = x.device).index_add(0, dst, torch.ones_like(dst, dtype = x.dtype))
        aggr = summed / count.clamp(min = 1).unsqueeze(-1)
        return self.lin_l(aggr) + self.lin_r(x)


class ResidualVQ(Module):
    """Stand-in for vector_quantize_pytorch.ResidualVQ with a shared codebook."""

    def __init__(self, *, dim, num_quantizers, codebook_size, shared_codebook = True, commitment_weight = 1.):
        super().__init__()
        self.num_quantizers = num_quantizers
        self.commitment_weight = commitment_weight
        self.codebook = nn.Parameter(torch.randn(codebook_size, dim))

    def forward(self, x):
        residual = x
        quantized_out = torch.zeros_like(x)
        all_codes, all_losses = [], []
        for _ in range(self.num_quantizers):
            dist = torch.cdist(residual, self.codebook.unsqueeze(0).expand(x.shape[0], -1, -1))
            codes = dist.argmin(dim = -1)
            quantized = self.codebook[codes]
            all_losses.append(F.mse_loss(quantized.detach(), residual) * self.commitment_weight)
            quantized = residual + (quantized - residual).detach()
            residual = residual - quantized.detach()
            quantized_out = quantized_out + quantized
            all_codes.append(codes)
        return quantized_out, torch.stack(all_codes, dim = -1), torch.stack(all_losses)


class Block(Module):
    def __init__(self, dim, groups = 8):
        super().__init__()
        self.proj = nn.Conv1d(dim, dim, 3, padding = 1)
        self.norm = nn.GroupNorm(groups, dim)
        self.act = nn.SiLU()

    def forward(self, x):
        x = self.proj(x)
        x = self.norm(x)
        x = self.act(x)
        return x


class ResnetBlock(Module):
    def __init__(self, dim, *, groups = 8):
        super().__init__()
        self.block1 = Block(dim, groups = groups)
        self.block2 = Block(dim, groups = groups)

    def forward(self, x):
        h = self.block1(x)
        h = self.block2(h)
        return h + x


# main classes

class MeshAutoencoder(Module):
    def __init__(
        self,
        dim,
        num_discrete_coors = 128,
        coor_continuous_range: Tuple[float, float] = (-1., 1.),
        dim_coor_embed = 64,
        encoder_depth = 2,
        decoder_depth = 2,
        dim_codebook = 192,
        num_quantizers = 2,
        codebook_size = 16384,
        commit_loss_weight = 0.1,
    ):
        super().__init__()

        self.num_discrete_coors = num_discrete_coors
        self.coor_continuous_range = coor_continuous_range

        self.coor_embed = nn.Embedding(num_discrete_coors, dim_coor_embed)
        self.project_in = nn.Linear(dim_coor_embed * 9, dim)

        self.encoders = ModuleList([])

        for _ in range(encoder_depth):
            sage_conv = SAGEConv(dim, dim)
            self.encoders.append(sage_conv)

        self.codebook_size = codebook_size
        self.num_quantizers = num_quantizers

        self.project_dim_codebook = nn.Linear(dim, dim_codebook * 3)

        self.quantizer = ResidualVQ(
            dim = dim_codebook,
            num_quantizers = num_quantizers,
            codebook_size = codebook_size,
            shared_codebook = True,
            commitment_weight = 1.,
        )

        self.commit_loss_weight = commit_loss_weight

        self.project_codebook_out = nn.Linear(dim_codebook * 3, dim)

        self.decoders = ModuleList([])

        for _ in range(decoder_depth):
            resnet_block = ResnetBlock(dim)
            self.decoders.append(resnet_block)

        self.to_coor_logits = nn.Linear(dim, num_discrete_coors * 9)

    def encode(self, *, vertices, faces, face_edges, return_face_coordinates = False):
        batch, num_vertices, num_coors, device = *vertices.shape, vertices.device
        _, num_faces, _ = faces.shape

        # repeat(faces, 'b nf nv -> b nf nv c'), repeat(vertices, 'b nv c -> b nf nv c')
        faces_vertices = faces.unsqueeze(-1).expand(-1, -1, -1, num_coors)
        vertices = vertices.unsqueeze(1).expand(-1, num_faces, -1, -1)

        face_coords = vertices.gather(-2, faces_vertices)
        face_coords = face_coords.reshape(batch, num_faces, 9)  # 9 coordinates per face

        face_embed = self.coor_embed(face_coords)
        face_embed = face_embed.reshape(batch, num_faces, -1)

        face_embed = self.project_in(face_embed)

        batch_arange = torch.arange(batch, device = device)
        batch_offset = batch_arange * num_faces
        batch_offset = batch_offset.view(batch, 1, 1)

        face_edges = face_edges + batch_offset
        face_edges = face_edges.permute(1, 0, 2).reshape(2, -1)  # 'b ij e -> ij (b e)'

        x = face_embed.reshape(batch * num_faces, -1)

        for conv in self.encoders:
            x = conv(x, face_edges)

        x = x.reshape(batch, num_faces, -1)

        if not return_face_coordinates:
            return x

        return x, face_coords

    def quantize(self, *, faces, face_embed):
        batch, device = faces.shape[0], faces.device

        max_vertex_index = faces.amax()
        num_vertices = int(max_vertex_index.item() + 1)

        face_embed = self.project_dim_codebook(face_embed)
        face_embed = face_embed.reshape(batch, faces.shape[1], 3, -1)

        vertex_dim = face_embed.shape[-1]
        faces_with_dim = faces.unsqueeze(-1).expand(-1, -1, -1, vertex_dim)

        faces_with_dim = faces_with_dim.reshape(batch, -1, vertex_dim)
        face_embed = face_embed.reshape(batch, -1, vertex_dim)

        vertices = torch.zeros((batch, num_vertices, vertex_dim), device = device)

        # scatter mean

        num = vertices.scatter_add(-2, faces_with_dim, face_embed)
        den = torch.zeros_like(vertices).scatter_add(-2, faces_with_dim, torch.ones_like(face_embed))

        averaged_vertices = num / den.clamp(min = 1e-5)

        # residual VQ

        quantized, codes, commit_loss = self.quantizer(averaged_vertices)

        # gather quantized vertexes back to faces for decoding

        face_embed_output = quantized.gather(-2, faces_with_dim)
        face_embed_output = face_embed_output.reshape(batch, faces.shape[1], -1)

        faces_with_quantized_dim = faces.reshape(batch, -1, 1).expand(-1, -1, self.num_quantizers)
        codes_output = codes.gather(-2, faces_with_quantized_dim)

        return face_embed_output, codes_output, commit_loss

    def decode(self, quantized):
        quantized = quantized.transpose(1, 2)  # 'b n d -> b d n'

        x = quantized

        for resnet_block in self.decoders:
            x = resnet_block(x)

        return x.transpose(1, 2)

    def tokenize(self, *args, **kwargs):
        assert 'return_codes' not in kwargs
        return self.forward(*args, return_codes = True, **kwargs)

    def forward(self, *, vertices, faces, face_edges, return_codes = False):
        discretized_vertices = discretize_coors(
            vertices,
            num_discrete = self.num_discrete_coors,
            continuous_range = self.coor_continuous_range,
        )

        encoded, face_coordinates = self.encode(
            vertices = discretized_vertices,
            faces = faces,
            face_edges = face_edges,
            return_face_coordinates = True
        )

        quantized, codes, commit_loss = self.quantize(
            face_embed = encoded,
            faces = faces
        )

        if return_codes:
            return codes

        quantized = self.project_codebook_out(quantized)

        decode = self.decode(quantized)

        pred_coor_bins = self.to_coor_logits(decode).reshape(*decode.shape[:2], 9, -1)

        # reconstruction loss on discretized coordinates on each face
        recon_loss = F.cross_entropy(
            pred_coor_bins.permute(0, 3, 1, 2),  # 'b ... c -> b c ...'
            face_coordinates
        )

        total_loss = recon_loss + commit_loss.sum() * self.commit_loss_weight
        return total_loss


torch.manual_seed(0)

autoencoder = MeshAutoencoder(dim = 32, dim_coor_embed = 8, dim_codebook = 16, codebook_size = 64)

# mock inputs

vertices = torch.randn((2, 121, 3))
faces = torch.randint(0, 121, (2, 64, 3))
face_edges = torch.randint(0, 64, (2, 2, 96))

# forward in the faces

loss = autoencoder(
    vertices = vertices,
    faces = faces,
    face_edges = face_edges
)

loss.backward()
encoder_grad = autoencoder.encoders[0].lin_l.weight.grad

# after much training...

face_vertex_codes = autoencoder.tokenize(
    vertices = vertices,
    faces = faces,
    face_edges = face_edges
)
print('loss', loss.item(), 'codes', tuple(face_vertex_codes.shape), 'max edge', int(face_edges.max()))
