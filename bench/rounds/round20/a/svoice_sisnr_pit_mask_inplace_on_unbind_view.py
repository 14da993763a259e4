# label: hazard raises
# why: the solver iterates over the stacked per-layer estimates (each est_src is an unbind view) and cal_si_snr_with_pit masks its argument in place with `estimate_source *= mask`, so with torch>=1.9 training dies with "Output 0 of UnbindBackward0 is a view and is being modified inplace".
# source: https://github.com/facebookresearch/svoice/issues/53 (svoice/models/sisnr_loss.py)
from itertools import permutations

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

EPS = 1e-8


def get_mask(source, source_lengths):
    B, _, T = source.size()
    mask = source.new_ones((B, 1, T))
    for i in range(B):
        mask[i, :, source_lengths[i]:] = 0
    return mask


def cal_si_snr_with_pit(source, estimate_source, source_lengths):
    assert source.size() == estimate_source.size()
    B, C, T = source.size()
    # mask padding position along T
    mask = get_mask(source, source_lengths)
    estimate_source *= mask  # <-- IPL004

    # Step 1. Zero-mean norm
    num_samples = source_lengths.view(-1, 1, 1).float()  # [B, 1, 1]
    mean_target = torch.sum(source, dim=2, keepdim=True) / num_samples
    mean_estimate = torch.sum(estimate_source, dim=2, keepdim=True) / num_samples
    zero_mean_target = source - mean_target
    zero_mean_estimate = estimate_source - mean_estimate
    # mask padding position along T
    zero_mean_target *= mask
    zero_mean_estimate *= mask

    # Step 2. SI-SNR with PIT
    s_target = torch.unsqueeze(zero_mean_target, dim=1)  # [B, 1, C, T]
    s_estimate = torch.unsqueeze(zero_mean_estimate, dim=2)  # [B, C, 1, T]
    pair_wise_dot = torch.sum(s_estimate * s_target, dim=3, keepdim=True)
    s_target_energy = torch.sum(s_target ** 2, dim=3, keepdim=True) + EPS
    pair_wise_proj = pair_wise_dot * s_target / s_target_energy
    e_noise = s_estimate - pair_wise_proj
    pair_wise_si_snr = torch.sum(pair_wise_proj ** 2, dim=3) / (torch.sum(e_noise ** 2, dim=3) + EPS)
    pair_wise_si_snr = 10 * torch.log10(pair_wise_si_snr + EPS)  # [B, C, C]
    pair_wise_si_snr = torch.transpose(pair_wise_si_snr, 1, 2)

    perms = source.new_tensor(list(permutations(range(C))), dtype=torch.long)
    index = torch.unsqueeze(perms, 2)
    perms_one_hot = source.new_zeros((*perms.size(), C)).scatter_(2, index, 1)
    snr_set = torch.einsum('bij,pij->bp', [pair_wise_si_snr, perms_one_hot])
    max_snr_idx = torch.argmax(snr_set, dim=1)  # [B]
    max_snr, _ = torch.max(snr_set, dim=1, keepdim=True)
    max_snr /= C
    return max_snr, perms, max_snr_idx, snr_set / C


def cal_loss(source, estimate_source, source_lengths):
    max_snr, perms, max_snr_idx, snr_set = cal_si_snr_with_pit(source, estimate_source, source_lengths)
    loss = 0 - torch.mean(max_snr)
    return loss, max_snr, estimate_source


class SWave(nn.Module):
    def __init__(self, N=8, L=4, C=2, num_layers=3):
        super().__init__()
        self.C, self.N = C, N
        self.encoder = nn.Conv1d(1, N, L, stride=L // 2)
        self.layers = nn.ModuleList([nn.Conv1d(N, N, 1) for _ in range(num_layers)])
        self.output = nn.Conv1d(N, N * C, 1)
        self.decoder = nn.ConvTranspose1d(N, 1, L, stride=L // 2)

    def forward(self, mixture):
        T_mix = mixture.shape[-1]
        mixture_w = F.relu(self.encoder(mixture.unsqueeze(1)))
        output = mixture_w
        outputs = []
        # generate wav after each block and optimize the loss
        for layer in self.layers:
            output = output + torch.tanh(layer(output))
            output_ii = self.output(output).view(mixture.shape[0] * self.C, self.N, -1)
            output_ii = self.decoder(output_ii).view(mixture.shape[0], self.C, -1)
            output_ii = F.pad(output_ii, (0, T_mix - output_ii.shape[-1]))
            outputs.append(output_ii)
        return torch.stack(outputs)


def main():
    model = SWave()
    mixture = torch.randn(2, 32)
    sources = torch.randn(2, 2, 32)
    lengths = torch.tensor([32, 28])
    estimate_source = model(mixture)
    loss = 0
    cnt = len(estimate_source)
    # apply a loss function after each layer
    for c_idx, est_src in enumerate(estimate_source):
        coeff = ((c_idx + 1) * (1 / cnt))
        sisnr_loss, snr, est_src = cal_loss(sources, est_src, lengths)
        loss += (coeff * sisnr_loss)
    loss /= len(estimate_source)
    loss.backward()
    return loss.detach(), model.encoder.weight.grad.clone()


loss, grad = main()
