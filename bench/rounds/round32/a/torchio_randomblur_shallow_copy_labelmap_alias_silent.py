# label: hazard silent
# why: Transform.__call__ only makes copy.copy(subject), and Image.__copy__ passes `tensor=self.data` on, so a LabelMap that RandomBlur leaves untouched is the same tensor in the input and the transformed subject; editing the transformed label in place (`transformed_data[...] = 0`) silently rewrites the original subject's label, which is later used as the reference for evaluation.
# source: https://github.com/TorchIO-project/torchio/issues/345
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DATA = 'data'
AFFINE = 'affine'
TYPE = 'type'
INTENSITY = 'intensity'
LABEL = 'label'
PROTECTED_KEYS = DATA, AFFINE, TYPE


class Image(dict):
    def __init__(self, tensor, affine=None, type=None, **kwargs):
        super().__init__(**kwargs)
        self[DATA] = tensor
        self[AFFINE] = torch.eye(4) if affine is None else affine
        self[TYPE] = type

    @property
    def data(self):
        return self[DATA]

    def set_data(self, tensor):
        self[DATA] = tensor

    @property
    def affine(self):
        return self[AFFINE]

    @property
    def type(self):
        return self[TYPE]

    def __copy__(self):
        kwargs = dict(
            tensor=self.data,
            affine=self.affine,
            type=self.type,
        )
        for key, value in self.items():
            if key in PROTECTED_KEYS: continue
            kwargs[key] = value  # should I copy? deepcopy?
        return self.__class__(**kwargs)


class ScalarImage(Image):
    def __init__(self, *args, **kwargs):
        kwargs.update({TYPE: INTENSITY})
        super().__init__(*args, **kwargs)


class LabelMap(Image):
    def __init__(self, *args, **kwargs):
        kwargs.update({TYPE: LABEL})
        super().__init__(*args, **kwargs)


class Subject(dict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.history = []
        self.update_attributes()

    def update_attributes(self):
        # This allows to get images using attribute notation, e.g. subject.t1
        self.__dict__.update(self)

    def __copy__(self):
        result_dict = {}
        for key, value in self.items():
            if isinstance(value, Image):
                value = copy.copy(value)
            else:
                value = copy.deepcopy(value)
            result_dict[key] = value
        new = Subject(result_dict)
        new.history = self.history[:]
        return new

    def get_images(self, intensity_only=True):
        images = [v for v in self.values() if isinstance(v, Image)]
        if intensity_only:
            images = [im for im in images if im.type == INTENSITY]
        return images


class Transform:
    def __init__(self, copy=True):
        self.copy = copy

    def __call__(self, subject):
        if self.copy:
            subject = copy.copy(subject)
        transformed = self.apply_transform(subject)
        return transformed

    def apply_transform(self, subject):
        raise NotImplementedError


class RandomBlur(Transform):
    def __init__(self, std=(0, 2), **kwargs):
        super().__init__(**kwargs)
        self.std_range = std

    def apply_transform(self, subject):
        std = float(torch.FloatTensor(1).uniform_(*self.std_range)) + 0.5
        for image in subject.get_images(intensity_only=True):
            image.set_data(blur(image.data, std))
        subject.history.append(('RandomBlur', {'std': std}))
        return subject


def blur(tensor, std, radius=2):
    x = torch.arange(-radius, radius + 1, dtype=torch.float32)
    kernel_1d = torch.exp(-x ** 2 / (2 * std ** 2))
    kernel_1d = kernel_1d / kernel_1d.sum()
    kernel = kernel_1d[:, None, None] * kernel_1d[None, :, None] * kernel_1d[None, None, :]
    out = F.conv3d(tensor[None].float(), kernel[None, None], padding=radius)
    return out[0]


class TinySegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv3d(1, 4, 3, padding=1), nn.InstanceNorm3d(4), nn.LeakyReLU(0.01, inplace=True),
            nn.Conv3d(4, 1, 1),
        )

    def forward(self, x):
        return self.net(x)


def dice(pred, target, eps=1e-5):
    inter = (pred * target).sum()
    return (2 * inter + eps) / (pred.sum() + target.sum() + eps)


def main():
    t1 = torch.rand(1, 12, 12, 12) * 1000
    label_volume = (t1 > 600).float()
    new_subject = Subject(
        t1=ScalarImage(tensor=t1),
        label=LabelMap(tensor=label_volume),
    )

    transform = RandomBlur()
    transformed = transform(new_subject)

    # ignore the first slices of the augmented label (e.g. a corrupted border)
    transformed_data = transformed.label.data[0]
    transformed_data[:2] = 0  # <-- IPL002

    model = TinySegNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    image = transformed.t1.data[None] / 1000
    logits = model(image)
    loss = F.binary_cross_entropy_with_logits(logits, transformed_data[None, None])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    # evaluate against the untouched reference segmentation
    with torch.no_grad():
        pred = (torch.sigmoid(model(new_subject.t1.data[None] / 1000)) > 0.5).float()
    reference = new_subject.label.data
    return loss.detach(), dice(pred[0], reference), reference.sum()


loss, reference_dice, reference_volume = main()
