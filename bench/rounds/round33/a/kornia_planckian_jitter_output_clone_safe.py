# label: safe
# why: The fixed apply_transform writes the rescaled red and blue channels into `output = input.clone().detach()` and clips that copy, so the generator's Sigmoid output saved for backward is never overwritten and the generator step backpropagates (through the red and blue channels).
# source: https://github.com/kornia/kornia/commit/9cac6d17641699bf8bc12d71763bbc669b54ed4b
from typing import Dict, List, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

_planckian_coeffs = {'blackbody': torch.Tensor([[0.6743, 0.4029, 0.0013],
                                                [0.6281, 0.4241, 0.1665],
                                                [0.5919, 0.4372, 0.2513],
                                                [0.5623, 0.4457, 0.3154],
                                                [0.5376, 0.4515, 0.3672],
                                                [0.5163, 0.4555, 0.4103],
                                                [0.4979, 0.4584, 0.4468],
                                                [0.4816, 0.4604, 0.4782],
                                                [0.4672, 0.4619, 0.5053],
                                                [0.4542, 0.4630, 0.5289],
                                                [0.4426, 0.4638, 0.5497],
                                                [0.4320, 0.4644, 0.5681],
                                                [0.4223, 0.4648, 0.5844],
                                                [0.4135, 0.4651, 0.5990],
                                                [0.4054, 0.4653, 0.6121],
                                                [0.3980, 0.4654, 0.6239],
                                                [0.3911, 0.4655, 0.6346],
                                                [0.3847, 0.4656, 0.6444],
                                                [0.3787, 0.4656, 0.6532],
                                                [0.3732, 0.4656, 0.6613],
                                                [0.3680, 0.4655, 0.6688],
                                                [0.3632, 0.4655, 0.6756],
                                                [0.3586, 0.4655, 0.6820],
                                                [0.3544, 0.4654, 0.6878],
                                                [0.3503, 0.4653, 0.6933]]),

                     'CIED': torch.Tensor([[0.5829, 0.4421, 0.2288],
                                           [0.5510, 0.4514, 0.2948],
                                           [0.5246, 0.4576, 0.3488],
                                           [0.5021, 0.4618, 0.3941],
                                           [0.4826, 0.4646, 0.4325],
                                           [0.4654, 0.4667, 0.4654],
                                           [0.4502, 0.4681, 0.4938],
                                           [0.4364, 0.4692, 0.5186],
                                           [0.4240, 0.4700, 0.5403],
                                           [0.4127, 0.4705, 0.5594],
                                           [0.4023, 0.4709, 0.5763],
                                           [0.3928, 0.4713, 0.5914],
                                           [0.3839, 0.4715, 0.6049],
                                           [0.3757, 0.4716, 0.6171],
                                           [0.3681, 0.4717, 0.6281],
                                           [0.3609, 0.4718, 0.6380],
                                           [0.3543, 0.4719, 0.6472],
                                           [0.3480, 0.4719, 0.6555],
                                           [0.3421, 0.4719, 0.6631],
                                           [0.3365, 0.4719, 0.6702],
                                           [0.3313, 0.4719, 0.6766],
                                           [0.3263, 0.4719, 0.6826],
                                           [0.3217, 0.4719, 0.6882]])
                     }

_planckian_coeffs_ratio = {
    'blackbody': torch.stack((_planckian_coeffs['blackbody'][:, 0] / _planckian_coeffs['blackbody'][:, 1],
                              _planckian_coeffs['blackbody'][:, 2] / _planckian_coeffs['blackbody'][:, 1]), 1),
    'CIED': torch.stack((_planckian_coeffs['CIED'][:, 0] / _planckian_coeffs['CIED'][:, 1],
                         _planckian_coeffs['CIED'][:, 2] / _planckian_coeffs['CIED'][:, 1]), 1)
}


class PlanckianJitterGenerator:
    def __init__(self, domain: List[float]) -> None:
        self.domain = domain

    def __call__(self, batch_shape: torch.Size, same_on_batch: bool = False) -> Dict[str, Tensor]:
        batch_size = batch_shape[0]
        if same_on_batch:
            idx = torch.randint(int(self.domain[0]), int(self.domain[1]), (1,)).repeat(batch_size)
        else:
            idx = torch.randint(int(self.domain[0]), int(self.domain[1]), (batch_size,))
        return dict(idx=idx)


class IntensityAugmentationBase2D(nn.Module):
    def __init__(self, p: float = 0.5, same_on_batch: bool = False, keepdim: bool = False) -> None:
        super().__init__()
        self.p = p
        self.same_on_batch = same_on_batch
        self.keepdim = keepdim
        self._param_generator = None

    def transform_tensor(self, input: Tensor) -> Tensor:
        if input.dim() == 3:
            input = input.unsqueeze(0)
        return input

    def forward_parameters(self, batch_shape: torch.Size) -> Dict[str, Tensor]:
        batch_prob = torch.rand(batch_shape[0]) < self.p
        params = self._param_generator(batch_shape, self.same_on_batch)
        params['batch_prob'] = batch_prob
        return params

    def apply_func(self, in_tensor: Tensor, params: Dict[str, Tensor]) -> Tensor:
        to_apply = params['batch_prob']
        # if no augmentation needed
        if torch.sum(to_apply) == 0:
            output = in_tensor
        # if all data needs to be augmented
        elif torch.sum(to_apply) == len(to_apply):
            output = self.apply_transform(in_tensor, params)
        else:
            output = in_tensor.clone()
            sub_params = {k: v[to_apply] for k, v in params.items()}
            output[to_apply] = self.apply_transform(in_tensor[to_apply], sub_params)
        return output

    def forward(self, input: Tensor, params: Optional[Dict[str, Tensor]] = None) -> Tensor:
        in_tensor = self.transform_tensor(input)
        if params is None:
            params = self.forward_parameters(in_tensor.shape)
        self._params = params
        return self.apply_func(in_tensor, self._params)


class RandomPlanckianJitter(IntensityAugmentationBase2D):
    r"""Apply planckian jitter transformation to input tensor."""

    def __init__(self, mode: str = "blackbody", select_from: Optional[Union[int, List[int]]] = None,
                 same_on_batch: bool = False, p: float = 0.5, keepdim: bool = False) -> None:
        super().__init__(p=p, same_on_batch=same_on_batch, keepdim=keepdim)

        if isinstance(select_from, int):
            select_from = [select_from]

        if select_from is not None:
            self.register_buffer('pl', _planckian_coeffs_ratio[mode][select_from])
        else:
            self.register_buffer('pl', _planckian_coeffs_ratio[mode])

        self._param_generator = PlanckianJitterGenerator([0, self.pl.shape[0]])

    def apply_transform(self, input: Tensor, params: Dict[str, Tensor], transform: Optional[Tensor] = None) -> Tensor:
        list_idx = params['idx'].tolist()

        mult_ch_zero = self.pl[list_idx][:, 0]
        mult_ch_two = self.pl[list_idx][:, 1]
        output = input.clone().detach()
        output[..., 0, :, :] = input[..., 0, :, :] * mult_ch_zero.unsqueeze(-1).unsqueeze(-1)
        output[..., 2, :, :] = input[..., 2, :, :] * mult_ch_two.unsqueeze(-1).unsqueeze(-1)

        ones = torch.ones_like(input)
        output = torch.where(output > 1, ones, output)

        return output


class Generator(nn.Module):
    def __init__(self, nz=8):
        super().__init__()
        self.fc = nn.Linear(nz, 16 * 4 * 4)
        self.up = nn.Sequential(
            nn.Upsample(scale_factor=2), nn.Conv2d(16, 8, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Upsample(scale_factor=2), nn.Conv2d(8, 3, 3, padding=1),
            nn.Sigmoid(),  # images in [0, 1], as kornia intensity augmentations expect
        )

    def forward(self, z):
        return self.up(self.fc(z).view(-1, 16, 4, 4))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.Flatten(), nn.Linear(16 * 4 * 4, 1),
        )

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    G, D = Generator(), Discriminator()
    aug = RandomPlanckianJitter(mode='blackbody', p=1.0)
    real = torch.rand(4, 3, 16, 16)
    z = torch.randn(4, 8)

    fake = G(z)
    # discriminator step on augmented real and fake images
    d_loss = F.softplus(-D(aug(real))).mean() + F.softplus(D(aug(fake.detach()))).mean()
    d_loss.backward()
    # generator step: gradients must flow through the differentiable augmentation
    D.zero_grad()
    g_loss = F.softplus(-D(aug(fake))).mean()
    g_loss.backward()
    return d_loss, g_loss, G


d_loss, g_loss, G = main()
print(float(d_loss), float(g_loss))
