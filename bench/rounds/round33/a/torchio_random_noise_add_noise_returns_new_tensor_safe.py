# label: safe
# why: After the fix add_noise returns `data + noise` and apply_transform stores the result back in the image dict, so the tensor the caller kept as the clean denoising target is never touched.
# source: https://github.com/fepegar/torchio/commit/bf60d5d403b794e0dcf6853e10157cedaf54604a
import time
import warnings
from abc import ABC, abstractmethod

import torch
import torch.nn as nn

INTENSITY = 'intensity'
LABEL = 'label'


def is_image_dict(variable):
    is_dict = isinstance(variable, dict)
    if not is_dict:
        return False
    has_right_keys = (
        'type' in variable
        and 'data' in variable
        and 'affine' in variable
    )
    return has_right_keys


class Transform(ABC):
    def __init__(self, verbose=False):
        self.verbose = verbose

    def __call__(self, sample):
        if self.verbose:
            start = time.time()
        self.parse_sample(sample)
        sample = self.apply_transform(sample)
        if self.verbose:
            duration = time.time() - start
            print(f'{self.__class__.__name__}: {duration:.3f} seconds')
        return sample

    @abstractmethod
    def apply_transform(self, sample):
        pass

    @staticmethod
    def parse_sample(sample):
        images_found = False
        for image_dict in sample.values():
            if is_image_dict(image_dict):
                images_found = True
                break
        if not images_found:
            warnings.warn(f'No image dicts found in sample. Sample keys: {sample.keys()}')


class RandomTransform(Transform):
    def __init__(self, seed=None, verbose=False):
        super().__init__(verbose=verbose)
        self.seed = seed

    def __call__(self, sample):
        self.check_seed()
        return super().__call__(sample)

    def check_seed(self):
        if self.seed is not None:
            torch.manual_seed(self.seed)


class RandomNoise(RandomTransform):
    def __init__(self, std_range=(0, 0.25), seed=None, verbose=False):
        super().__init__(seed=seed, verbose=verbose)
        self.std_range = std_range

    def apply_transform(self, sample):
        std = self.get_params(self.std_range)
        sample['random_noise'] = std
        for image_dict in sample.values():
            if not is_image_dict(image_dict):
                continue
            if image_dict['type'] != INTENSITY:
                continue
            image_dict['data'] = add_noise(image_dict['data'], std)
        return sample

    @staticmethod
    def get_params(std_range):
        std = torch.FloatTensor(1).uniform_(*std_range).item()
        return std


def add_noise(data, std):
    noise = torch.FloatTensor(*data.shape).normal_(mean=0, std=std)
    data = data + noise
    return data


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv3d(1, 4, 3, padding=1),
            nn.ReLU(),
            nn.Conv3d(4, 1, 3, padding=1),
        )

    def forward(self, x):
        return x + self.net(x)


def load_sample():
    t1 = torch.rand(1, 8, 8, 8)
    seg = (t1 > 0.5).float()
    return {
        't1': {'data': t1, 'affine': torch.eye(4), 'type': INTENSITY},
        'label': {'data': seg, 'affine': torch.eye(4), 'type': LABEL},
    }


def main():
    torch.manual_seed(0)
    model = Denoiser()
    transform = RandomNoise(std_range=(0.1, 0.2))
    sample = load_sample()
    clean = sample['t1']['data']
    noisy_sample = transform(sample)
    noisy = noisy_sample['t1']['data']
    restored = model(noisy[None])
    loss = nn.functional.mse_loss(restored, clean[None])
    loss.backward()
    return clean, noisy, loss, model


clean, noisy, loss, model = main()
print(float(loss))
