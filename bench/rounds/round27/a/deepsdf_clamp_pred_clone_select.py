# label: hazard raises
# why: torch.clamp saves its input pred_clone[:, 0] (a view of pred_clone) for backward, and writing the clamped value back into pred_clone[:, 0] bumps the shared version counter before chunk_loss.backward() runs.
# source: https://github.com/facebookresearch/DeepSDF/commit/880167c64e90e054ca9fb1f48cdd3531755adba5
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class Decoder(nn.Module):
    def __init__(self, latent_size, dims, norm_layers=(), latent_in=(), use_tanh=False):
        super(Decoder, self).__init__()
        # dims is an array of dimensions where dims[i] is the number of nodes at layer i
        dims = [latent_size + 3] + dims + [1 + 2]  # Added last layer to have extra 2 nodes
        self.num_layers = len(dims)
        self.norm_layers = norm_layers
        self.latent_in = latent_in
        for layer in range(0, self.num_layers - 1):
            if layer + 1 in latent_in:
                out_dim = dims[layer + 1] - dims[0]
            else:
                out_dim = dims[layer + 1]
            setattr(self, "lin" + str(layer), nn.Linear(dims[layer], out_dim))
            if self.norm_layers is not None and layer in self.norm_layers:
                setattr(self, "bn" + str(layer), nn.LayerNorm(out_dim))
        self.use_tanh = use_tanh
        if use_tanh:
            self.tanh = nn.Tanh()
        self.relu = nn.ReLU()
        self.th = nn.Tanh()

    # input: N x (L+3)
    def forward(self, input):
        x = input
        for layer in range(0, self.num_layers - 1):
            lin = getattr(self, "lin" + str(layer))
            if layer in self.latent_in:
                x = torch.cat([x, input], 1)
            x = lin(x)
            if layer == self.num_layers - 2 and self.use_tanh:
                x = self.tanh(x)
            if layer < self.num_layers - 2:
                if self.norm_layers is not None and layer in self.norm_layers:
                    bn = getattr(self, "bn" + str(layer))
                    x = bn(x)
                x = self.relu(x)
        if hasattr(self, "th"):
            x = self.th(x)
        return x


def main():
    latent_size = 8
    num_samp_per_scene = 16
    minT, maxT = -0.1, 0.1
    enforce_minmax = True
    decoder = Decoder(latent_size, [32, 32, 32], norm_layers=(0, 1), latent_in=(2,))
    lat_vecs = nn.Embedding(4, latent_size)
    loss_l1 = nn.L1Loss(reduction="sum")

    indices = torch.tensor([0, 1])
    xyz = torch.rand(2 * num_samp_per_scene, 3) - 0.5
    sdf_gt = torch.clamp(torch.randn(2 * num_samp_per_scene, 1) * 0.1, minT, maxT)
    theta_phi = (torch.rand(2 * num_samp_per_scene, 2) * 2 - 1)
    ground_truth = torch.cat([sdf_gt, theta_phi * math.pi], dim=1)
    num_sdf_samples = xyz.shape[0]

    batch_vecs = lat_vecs(indices.unsqueeze(-1).repeat(1, num_samp_per_scene).view(-1))
    input = torch.cat([batch_vecs, xyz], dim=1)

    # NN optimization
    pred = decoder(input)
    pred_clone = pred.clone()

    # Multiply pred theta_phi by pi (to match tanh output to ground truth)
    pred_clone[:, 1:] = pred_clone[:, 1:] * math.pi

    # Clamp prediction
    if enforce_minmax:
        clamped_sdf = torch.clamp(pred_clone[:, 0], minT, maxT)  # Added clamping of norm
        pred_clone[:, 0] = clamped_sdf  # <-- IPL001

    chunk_loss = loss_l1(pred_clone, ground_truth) / num_sdf_samples
    chunk_loss.backward()
    print(chunk_loss.item(), decoder.lin0.weight.grad.norm().item())


main()
