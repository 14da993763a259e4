# label: hazard silent
# why: RandomBiasField multiplies the bias field into image_dict['data'] in place, i.e. into the tensor the caller still holds as the original image; the bias-correction pretext target log(corrupted / original) is then identically zero.
# source: https://github.com/fepegar/torchio/commit/47068c0a6efa9af4d62dcf096f188b67c93512dc
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


class RandomBiasField(RandomTransform):
    def __init__(
            self,
            coefficients_range=(-0.5, 0.5),
            order=3,
            seed=None,
            verbose=False,
            ):
        super().__init__(seed=seed, verbose=verbose)
        self.coefficients_range = coefficients_range
        self.order = order

    def apply_transform(self, sample):
        coefficients = self.get_params(self.order, self.coefficients_range)
        sample['random_bias_field'] = coefficients
        for image_name, image_dict in sample.items():
            if not is_image_dict(image_dict):
                continue
            if image_dict['type'] != INTENSITY:
                continue
            coefficients = self.get_params(self.order, self.coefficients_range)
            sample[image_name]['random_bias_field'] = coefficients
            bias_field = self.generate_bias_field_map(
                image_dict['data'], self.order, coefficients)
            image_dict['data'] *= bias_field  # <-- IPL004
        return sample

    @staticmethod
    def get_params(order, coefficients_range):
        """
        Sampling of the appropriate number of coefficients for the creation
        of the bias field map
        """
        random_coefficients = []
        for x_order in range(0, order + 1):
            for y_order in range(0, order + 1 - x_order):
                for z_order in range(0, order + 1 - (x_order + y_order)):
                    number = torch.FloatTensor(1).uniform_(*coefficients_range)
                    random_coefficients.append(number.item())
        return torch.tensor(random_coefficients)

    @staticmethod
    def generate_bias_field_map(data, order, coefficients):
        """
        Create the bias field map using a linear combination of polynomial
        functions and the coefficients previously sampled
        """
        shape = data.shape[1:]  # first axis is channels
        ranges = [torch.arange(-n / 2, n / 2) for n in shape]

        bf_map = torch.zeros(shape)
        x_mesh, y_mesh, z_mesh = torch.meshgrid(*ranges, indexing='ij')

        x_mesh = x_mesh / x_mesh.max()
        y_mesh = y_mesh / y_mesh.max()
        z_mesh = z_mesh / z_mesh.max()

        i = 0
        for x_order in range(order + 1):
            for y_order in range(order + 1 - x_order):
                for z_order in range(order + 1 - (x_order + y_order)):
                    random_coefficient = coefficients[i]
                    new_map = (
                        random_coefficient
                        * x_mesh ** x_order
                        * y_mesh ** y_order
                        * z_mesh ** z_order
                    )
                    bf_map += new_map
                    i += 1
        return torch.exp(bf_map)


def load_subject():
    t1 = torch.rand(1, 8, 8, 8) + 0.5
    seg = (t1 > 1.0).float()
    return {
        't1': {'data': t1, 'affine': torch.eye(4), 'type': INTENSITY},
        'label': {'data': seg, 'affine': torch.eye(4), 'type': LABEL},
    }


class BiasRegressor(nn.Module):
    """Predicts the log bias field from the corrupted image (bias-correction pretext task)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv3d(1, 4, 3, padding=1),
            nn.ReLU(),
            nn.Conv3d(4, 1, 3, padding=1),
        )

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    model = BiasRegressor()
    transform = RandomBiasField(coefficients_range=(-0.3, 0.3), order=2)
    subject = load_subject()
    original = subject['t1']['data']
    transformed = transform(subject)
    corrupted = transformed['t1']['data']
    # the regression target is the log ratio between the corrupted and the original image
    log_bias_target = torch.log(corrupted / original)
    pred = model(corrupted[None])
    loss = nn.functional.mse_loss(pred, log_bias_target[None])
    loss.backward()
    return original, corrupted, log_bias_target, loss, model


original, corrupted, log_bias_target, loss, model = main()
print(float(loss), float(log_bias_target.abs().max()))
