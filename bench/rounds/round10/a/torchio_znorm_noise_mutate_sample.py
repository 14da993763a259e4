# label: hazard silent
# why: the early TorchIO transforms normalize and add noise to the arrays inside the sample dict in place, so the "original" image the caller kept for comparison is silently the transformed one
# source: https://github.com/TorchIO-project/torchio/issues/26
import torch

torch.manual_seed(0)


class RandomTransform:
    def __init__(self, seed=None, verbose=False):
        self.seed = seed
        self.verbose = verbose

    def __call__(self, sample):
        if self.seed is not None:
            torch.manual_seed(self.seed)
        return self.apply_transform(sample)


def mean_plus(data):
    return data > data.mean()


def znorm(data, masking_function=None):
    if masking_function is None:
        masking_function = mean_plus
    mask_data = masking_function(data)
    values = data[mask_data]
    mean, std = values.mean(), values.std()
    data -= mean  # <-- IPL004: normalizes the array that the caller's sample dict still holds
    data /= std  # <-- IPL004: same array


class ZNormalization:
    def __init__(self, verbose=False):
        self.verbose = verbose

    def __call__(self, sample):
        for modality_array in sample['image'].values():
            znorm(modality_array)
        return sample


def add_noise(data, std):
    noise = torch.FloatTensor(*data.shape).normal_(mean=0, std=std)
    data += noise  # <-- IPL004: adds the noise into the caller's array


class RandomNoise(RandomTransform):
    def __init__(self, std_range=(0, 0.25), seed=None, verbose=False):
        super().__init__(seed=seed, verbose=verbose)
        self.std_range = std_range

    def apply_transform(self, sample):
        std = self.get_params(self.std_range)
        sample['random_noise'] = std
        for value in sample['image'].values():
            add_noise(value, std)
        return sample

    @staticmethod
    def get_params(std_range):
        std = torch.FloatTensor(1).uniform_(*std_range).item()
        return std


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, sample):
        for t in self.transforms:
            sample = t(sample)
        return sample


subject = {'image': {'t1': torch.rand(1, 8, 8, 8) * 400 + 100, 't2': torch.rand(1, 8, 8, 8) * 900 + 50}}
original_t1 = subject['image']['t1']
transform = Compose([ZNormalization(), RandomNoise(seed=42)])
transformed = transform(dict(subject))
augmented_t1 = transformed['image']['t1']
# consistency target used for self-supervised pretraining: raw intensities vs augmented view
raw_mean_intensity = original_t1.mean()
