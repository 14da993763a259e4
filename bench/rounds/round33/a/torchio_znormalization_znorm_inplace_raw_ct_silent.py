# label: hazard silent
# why: ZNormalization.apply_transform calls znorm(image_dict['data']), which standardises the tensor in place (`data -= mean`, `data /= std`); the raw CT volume the caller kept to build a HU-threshold body mask is therefore already z-scored, so the mask (and the masked loss) are computed from normalised values.
# source: https://github.com/fepegar/torchio/commit/9ca546aea33638933e401ce8d54f46628e5d4398
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


class ZNormalization(Transform):
    def apply_transform(self, sample):
        for image_dict in sample.values():
            if not is_image_dict(image_dict):
                continue
            znorm(image_dict['data'])
        return sample


def znorm(data, masking_function=None):
    if masking_function is None:
        masking_function = mean_plus
    mask_data = masking_function(data)
    values = data[mask_data]
    mean, std = values.mean(), values.std()
    data -= mean  # <-- IPL004
    data /= std  # <-- IPL004


def mean_plus(data):
    return data > data.mean()


class SegNet3D(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv3d(1, 4, 3, padding=1),
            nn.ReLU(),
            nn.Conv3d(4, 2, 1),
        )

    def forward(self, x):
        return self.net(x)


def load_ct_subject():
    torch.manual_seed(1)
    ct = torch.full((1, 8, 8, 8), -1000.0)  # air in Hounsfield units
    ct[:, 2:6, 2:6, 2:6] = 40.0 + 10.0 * torch.randn(1, 4, 4, 4)  # soft tissue
    ct[:, 3:5, 3:5, 3:5] = 700.0  # bone
    return {'ct': {'data': ct, 'affine': torch.eye(4), 'type': INTENSITY}}


def main():
    torch.manual_seed(0)
    model = SegNet3D()
    subject = load_ct_subject()
    raw_ct = subject['ct']['data']
    preprocessed = ZNormalization()(subject)
    # body mask from the raw Hounsfield values: everything denser than -500 HU
    body_mask = (raw_ct > -500).float()
    target = (raw_ct > 300).long()  # bone label from the raw volume
    logits = model(preprocessed['ct']['data'][None])
    ce = nn.functional.cross_entropy(logits, target, reduction='none')
    loss = (ce * body_mask).sum() / body_mask.sum().clamp(min=1)
    loss.backward()
    return body_mask, target, loss, model


body_mask, target, loss, model = main()
print(float(body_mask.sum()), float(loss))
