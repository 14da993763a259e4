# label: hazard raises
# why: the encoder normalizes the splatted normals with `input_normal.jdata /= (input_normal.jdata.norm(...) + 1e-6)`, overwriting the tensor that norm() saved for backward while the normals carry gradient.
# source: https://github.com/nv-tlabs/XCube/issues/33 (xcube/modules/autoencoding/base_encoder.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class JaggedTensor:
    def __init__(self, jdata):
        self.jdata = jdata


class GridBatch:
    def __init__(self, ijk, voxel_size=0.1):
        self.ijk = ijk
        self.voxel_size = voxel_size

    def grid_to_world(self, ijk):
        return JaggedTensor(ijk * self.voxel_size)

    def splat_trilinear(self, ref_xyz, values):
        coords = self.grid_to_world(self.ijk.float()).jdata
        w = torch.softmax(-torch.cdist(coords, ref_xyz.jdata) / self.voxel_size, dim=1)
        return JaggedTensor(w @ values.jdata)


def get_embedder(multires):
    def embed(x):
        out = [x]
        for i in range(multires):
            out += [torch.sin((2.0 ** i) * x), torch.cos((2.0 ** i) * x)]
        return torch.cat(out, dim=1)
    return embed, 3 + 3 * 2 * multires


class Encoder(nn.Module):
    def __init__(self, c_dim=8, use_input_normal=True):
        super().__init__()
        self.use_input_normal = use_input_normal
        embed_fn, input_ch = get_embedder(2)
        self.pos_embedder = embed_fn
        input_dim = input_ch + (3 if use_input_normal else 0)
        self.mix_fc = nn.Linear(input_dim, c_dim)

    def forward(self, grid, batch):
        input_normal = batch["target_normal"]
        coords = grid.grid_to_world(grid.ijk.float()).jdata
        unet_feat = self.pos_embedder(coords)

        if self.use_input_normal:
            ref_grid = batch["input_grid"]
            ref_xyz = ref_grid.grid_to_world(ref_grid.ijk.float())
            # splatting normal
            input_normal = grid.splat_trilinear(ref_xyz, JaggedTensor(input_normal))
            # normalize normal
            input_normal.jdata /= (input_normal.jdata.norm(dim=1, keepdim=True) + 1e-6)  # <-- IPL001: in-place divide of the tensor norm() saved for backward
            unet_feat = torch.cat([unet_feat, input_normal.jdata], dim=1)

        unet_feat = self.mix_fc(unet_feat)
        return unet_feat


normal_head = nn.Linear(3, 3)
encoder = Encoder()
grid = GridBatch(torch.randint(0, 4, (10, 3)))
input_grid = GridBatch(torch.randint(0, 4, (12, 3)))
input_points = torch.rand(12, 3)
batch = {"input_grid": input_grid, "target_normal": normal_head(input_points)}
feat = encoder(grid, batch)
loss = feat.pow(2).mean()
loss.backward()
