"""The model suite: tiny models built offline from their configs, with random weights.

Each entry builds a model in eval mode and the inputs of two calls (same shapes,
new values, so the second call must hit the cache). Nothing is downloaded: every
transformers model comes from a config small enough to compile in seconds.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch

# sizes shared by the tiny transformers configs
VOCAB, HIDDEN, LAYERS, HEADS, FFN, POSITIONS = 99, 32, 2, 4, 37, 64


@dataclasses.dataclass
class ModelCase:
    """A model of the suite: `build()` returns the module, `inputs(seed)` one call's
    keyword arguments."""

    name: str
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[int], dict[str, Any]]
    known_gap: str = ""  # why minidynamo does not capture it as torch.compile does, yet


def token_ids(seed: int, batch: int = 2, length: int = 8) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(1, VOCAB, (batch, length), generator=generator)


def ids_only(seed: int) -> dict[str, Any]:
    return {"input_ids": token_ids(seed)}


def ids_and_mask(seed: int) -> dict[str, Any]:
    ids = token_ids(seed)
    mask = torch.ones_like(ids)
    mask[0, -2:] = 0  # the first sequence is padded
    return {"input_ids": ids, "attention_mask": mask}


def encoder_decoder(seed: int) -> dict[str, Any]:
    return {"input_ids": token_ids(seed), "decoder_input_ids": token_ids(seed + 1000, length=5),
            "use_cache": False}


def with_cache(inputs: Callable[[int], dict[str, Any]]) -> Callable[[int], dict[str, Any]]:
    """The same call with the decoder's key/value cache made (`use_cache=True`)."""
    return lambda seed: {**inputs(seed), "use_cache": True}


def speech(seed: int) -> dict[str, Any]:
    return {"input_features": randn(seed, 2, 8, 32),
            "decoder_input_ids": token_ids(seed, length=5), "use_cache": False}


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def transformers_model(model_class: str, config_class: str, **config: Any) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        import transformers

        torch.manual_seed(0)
        settings = getattr(transformers, config_class)(**config)
        return getattr(transformers, model_class)(settings).eval()

    return build


def decoder_config(**extra: Any) -> dict[str, Any]:
    return dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                num_attention_heads=HEADS, intermediate_size=FFN,
                max_position_embeddings=POSITIONS, **extra)


def torch_module(build_module: Callable[[], torch.nn.Module]) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return build_module().eval()

    return build


class TransformerModel(torch.nn.Module):
    """nn.Transformer, encoder and decoder, with a causal mask on the target."""

    def __init__(self) -> None:
        super().__init__()
        self.transformer = torch.nn.Transformer(
            d_model=HIDDEN, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=2,
            dim_feedforward=FFN, batch_first=True)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        mask = torch.nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        return self.transformer(src, tgt, tgt_mask=mask)


class MaskedAttention(torch.nn.Module):
    """nn.MultiheadAttention with a key padding mask."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(HIDDEN, HEADS, batch_first=True)

    def forward(self, x: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        out, weights = self.attention(x, x, x, key_padding_mask=padding)
        return out + weights.sum()


def padding_mask(seed: int) -> torch.Tensor:
    mask = torch.zeros(2, 8, dtype=torch.bool)
    mask[0, -(seed % 3 + 1):] = True
    return mask


CASES = [
    ModelCase("gpt2", transformers_model(
        "GPT2LMHeadModel", "GPT2Config", vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS,
        n_head=HEADS, n_positions=POSITIONS, bos_token_id=0, eos_token_id=0), ids_only),
    ModelCase("bert", transformers_model(
        "BertModel", "BertConfig", **decoder_config()), ids_and_mask),
    ModelCase("roberta", transformers_model(
        "RobertaModel", "RobertaConfig", **decoder_config(pad_token_id=0)), ids_and_mask),
    ModelCase("llama", transformers_model(
        "LlamaForCausalLM", "LlamaConfig", **decoder_config(num_key_value_heads=2)), ids_only),
    ModelCase("mistral", transformers_model(
        "MistralForCausalLM", "MistralConfig", **decoder_config(num_key_value_heads=2)), ids_only),
    ModelCase("qwen2", transformers_model(
        "Qwen2ForCausalLM", "Qwen2Config", **decoder_config(num_key_value_heads=2)), ids_only),
    ModelCase("opt", transformers_model(
        "OPTForCausalLM", "OPTConfig", vocab_size=VOCAB, hidden_size=HIDDEN,
        num_hidden_layers=LAYERS, num_attention_heads=HEADS, ffn_dim=FFN,
        max_position_embeddings=POSITIONS, word_embed_proj_dim=HIDDEN), ids_only),
    ModelCase("gpt_neox", transformers_model(
        "GPTNeoXForCausalLM", "GPTNeoXConfig", **decoder_config()), ids_only),
    ModelCase("bart", transformers_model(
        "BartModel", "BartConfig", vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS,
        decoder_layers=LAYERS, encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
        encoder_ffn_dim=FFN, decoder_ffn_dim=FFN, max_position_embeddings=POSITIONS),
        encoder_decoder),
    ModelCase("whisper", transformers_model(
        "WhisperModel", "WhisperConfig", vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS,
        decoder_layers=LAYERS, encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
        encoder_ffn_dim=FFN, decoder_ffn_dim=FFN, num_mel_bins=8, max_source_positions=16,
        max_target_positions=POSITIONS, pad_token_id=0, bos_token_id=0, eos_token_id=0,
        decoder_start_token_id=0),
        speech),
    ModelCase("clip_text", transformers_model(
        "CLIPTextModel", "CLIPTextConfig", **decoder_config()), ids_only),
    ModelCase("resnet", transformers_model(
        "ResNetModel", "ResNetConfig", num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
        depths=[1, 1], layer_type="basic"),
        lambda seed: {"pixel_values": randn(seed, 2, 3, 32, 32)}),
    ModelCase("t5", transformers_model(
        "T5Model", "T5Config", vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=FFN,
        num_layers=LAYERS, num_heads=HEADS, decoder_start_token_id=0), encoder_decoder),
    ModelCase("vit", transformers_model(
        "ViTModel", "ViTConfig", hidden_size=HIDDEN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, intermediate_size=FFN, image_size=16, patch_size=4),
        lambda seed: {"pixel_values": randn(seed, 2, 3, 16, 16)}),
    ModelCase("distilbert", transformers_model(
        "DistilBertModel", "DistilBertConfig", vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS,
        n_heads=HEADS, hidden_dim=FFN, max_position_embeddings=POSITIONS), ids_and_mask),
    ModelCase("albert", transformers_model(
        "AlbertModel", "AlbertConfig", embedding_size=16, **decoder_config()), ids_and_mask),
    ModelCase("electra", transformers_model(
        "ElectraModel", "ElectraConfig", embedding_size=HIDDEN, **decoder_config()),
        ids_and_mask),
    ModelCase("phi", transformers_model(
        "PhiForCausalLM", "PhiConfig", **decoder_config()), ids_only),
    ModelCase("gemma", transformers_model(
        "GemmaForCausalLM", "GemmaConfig", **decoder_config(num_key_value_heads=2, head_dim=8)),
        ids_only),
    ModelCase("gptj", transformers_model(
        "GPTJForCausalLM", "GPTJConfig", vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS,
        n_head=HEADS, n_positions=POSITIONS, rotary_dim=4, bos_token_id=0, eos_token_id=0),
        ids_only),
    ModelCase("mixtral", transformers_model(  # a mixture of experts: a library custom op
        "MixtralForCausalLM", "MixtralConfig",
        **{**decoder_config(num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
           "intermediate_size": 48}), ids_only),  # grouped_mm wants 16-byte strides
    ModelCase("nn_transformer", torch_module(TransformerModel),
              lambda seed: {"src": randn(seed, 2, 7, HIDDEN), "tgt": randn(seed + 1, 2, 5, HIDDEN)}),
    ModelCase("nn_multihead_attention", torch_module(MaskedAttention),
              lambda seed: {"x": randn(seed, 2, 8, HIDDEN), "padding": padding_mask(seed)}),
    ModelCase("nn_lstm", torch_module(lambda: torch.nn.LSTM(HIDDEN, HIDDEN, batch_first=True)),
              lambda seed: {"input": randn(seed, 2, 6, HIDDEN)}),
]


# The encoder-decoders again, with their cache made in `forward` (`DynamicCache(config)`
# deep-copies the config, whose strict-dataclass validators look up a dict keyed by
# classes and `typing` forms: `{Union: ..., list: ...}.get(get_origin(annotation))`).
BY_NAME = {case.name: case for case in CASES}
CASES += [
    dataclasses.replace(BY_NAME["bart"], name="bart_cached", inputs=with_cache(encoder_decoder)),
    dataclasses.replace(BY_NAME["whisper"], name="whisper_cached", inputs=with_cache(speech)),
    dataclasses.replace(BY_NAME["t5"], name="t5_cached", inputs=with_cache(encoder_decoder)),
]
