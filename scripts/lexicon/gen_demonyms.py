#!/usr/bin/env python3
"""Writes engine/src/classify/lexicon/demonyms.tsv: the countries of ISO 3166-1 and their
demonyms (the adjective, and the noun for a person where it differs: "Polish", "Pole") that
WordNet's categories (categories.tsv, gen_lexicon.py) lack, in categories.tsv's format, as
`country` values. WordNet 3.0 is 2006 data and files some peoples' adjectives under other senses
("Polish" is mainly the verb, "Korean" names two countries): those are the ones added here.

The table below is the ISO 3166-1 short names with their English demonyms as the standard lists
give them (the nationality adjectives of the UK's and the US's government style guides); it is
not drawn from any evaluation set. An entry is written only when its surface is in no line of
categories.tsv; its canonical value is the country's value in categories.tsv when WordNet has the
country (so "Polish" agrees with "Poland"), else the country's name, which is then written too.

    python3 scripts/lexicon/gen_demonyms.py            # rewrites demonyms.tsv
    python3 scripts/lexicon/gen_demonyms.py --check    # exits 1 if it is stale
"""
import os, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LEXICON = os.path.join(ROOT, "engine", "src", "classify", "lexicon")

# country (ISO 3166-1 short name, as commonly written) | adjective | person nouns, comma-separated (when other
# than the adjective)
TABLE = """
Afghanistan|Afghan
Albania|Albanian
Algeria|Algerian
Andorra|Andorran
Angola|Angolan
Antigua and Barbuda|Antiguan
Argentina|Argentine|Argentinian
Armenia|Armenian
Australia|Australian|Aussie
Austria|Austrian
Azerbaijan|Azerbaijani
Bahamas|Bahamian
Bahrain|Bahraini
Bangladesh|Bangladeshi
Barbados|Barbadian
Belarus|Belarusian
Belgium|Belgian
Belize|Belizean
Benin|Beninese
Bhutan|Bhutanese
Bolivia|Bolivian
Bosnia and Herzegovina|Bosnian
Botswana|Botswanan|Motswana
Brazil|Brazilian
Brunei|Bruneian
Bulgaria|Bulgarian
Burkina Faso|Burkinabe
Burundi|Burundian
Cambodia|Cambodian
Cameroon|Cameroonian
Canada|Canadian
Cape Verde|Cape Verdean
Chad|Chadian
Chile|Chilean
China|Chinese
Colombia|Colombian
Comoros|Comoran
Congo|Congolese
Costa Rica|Costa Rican
Croatia|Croatian|Croat
Cuba|Cuban
Cyprus|Cypriot
Czechia|Czech
Denmark|Danish|Dane
Djibouti|Djiboutian
Dominica|Dominican
Ecuador|Ecuadorian
Egypt|Egyptian
El Salvador|Salvadoran|Salvadorean
Equatorial Guinea|Equatoguinean
Eritrea|Eritrean
Estonia|Estonian
Eswatini|Swazi
Ethiopia|Ethiopian
Fiji|Fijian
Finland|Finnish|Finn
France|French|Frenchman,Frenchwoman
Gabon|Gabonese
Gambia|Gambian
Georgia|Georgian
Germany|German
Ghana|Ghanaian
Greece|Greek
Grenada|Grenadian
Guatemala|Guatemalan
Guinea|Guinean
Guinea-Bissau|Bissau-Guinean
Guyana|Guyanese
Haiti|Haitian
Honduras|Honduran
Hungary|Hungarian
Iceland|Icelandic|Icelander
India|Indian
Indonesia|Indonesian
Iran|Iranian
Iraq|Iraqi
Ireland|Irish|Irishman,Irishwoman
Israel|Israeli
Italy|Italian
Ivory Coast|Ivorian
Jamaica|Jamaican
Japan|Japanese
Jordan|Jordanian
Kazakhstan|Kazakh|Kazakhstani
Kenya|Kenyan
Kiribati|I-Kiribati
Kosovo|Kosovan|Kosovar
Kuwait|Kuwaiti
Kyrgyzstan|Kyrgyz
Laos|Lao|Laotian
Latvia|Latvian
Lebanon|Lebanese
Lesotho|Basotho
Liberia|Liberian
Libya|Libyan
Liechtenstein|Liechtensteiner
Lithuania|Lithuanian
Luxembourg|Luxembourgish|Luxembourger
Madagascar|Malagasy
Malawi|Malawian
Malaysia|Malaysian
Maldives|Maldivian
Mali|Malian
Malta|Maltese
Marshall Islands|Marshallese
Mauritania|Mauritanian
Mauritius|Mauritian
Mexico|Mexican
Micronesia|Micronesian
Moldova|Moldovan
Monaco|Monegasque
Mongolia|Mongolian
Montenegro|Montenegrin
Morocco|Moroccan
Mozambique|Mozambican
Myanmar|Burmese
Namibia|Namibian
Nauru|Nauruan
Nepal|Nepalese|Nepali
Netherlands|Dutch|Dutchman,Dutchwoman
New Zealand|New Zealand|New Zealander,Kiwi
Nicaragua|Nicaraguan
Niger|Nigerien
Nigeria|Nigerian
North Korea|North Korean
North Macedonia|Macedonian
Norway|Norwegian
Oman|Omani
Pakistan|Pakistani
Palau|Palauan
Palestine|Palestinian
Panama|Panamanian
Papua New Guinea|Papua New Guinean
Paraguay|Paraguayan
Peru|Peruvian
Philippines|Filipino|Filipina
Poland|Polish|Pole
Portugal|Portuguese
Qatar|Qatari
Romania|Romanian
Russia|Russian
Rwanda|Rwandan
Saint Lucia|Saint Lucian
Samoa|Samoan
San Marino|Sammarinese
Saudi Arabia|Saudi|Saudi Arabian
Senegal|Senegalese
Serbia|Serbian|Serb
Seychelles|Seychellois
Sierra Leone|Sierra Leonean
Singapore|Singaporean
Slovakia|Slovak|Slovakian
Slovenia|Slovenian|Slovene
Solomon Islands|Solomon Islander
Somalia|Somali
South Africa|South African
South Korea|Korean|South Korean
South Sudan|South Sudanese
Spain|Spanish|Spaniard
Sri Lanka|Sri Lankan
Sudan|Sudanese
Suriname|Surinamese
Sweden|Swedish|Swede
Switzerland|Swiss
Syria|Syrian
Taiwan|Taiwanese
Tajikistan|Tajik|Tajikistani
Tanzania|Tanzanian
Thailand|Thai
Togo|Togolese
Tonga|Tongan
Trinidad and Tobago|Trinidadian|Tobagonian
Tunisia|Tunisian
Turkey|Turkish|Turk
Turkmenistan|Turkmen
Tuvalu|Tuvaluan
Uganda|Ugandan
Ukraine|Ukrainian
United Arab Emirates|Emirati
United Kingdom|British|Briton,Brit
United States|American
Uruguay|Uruguayan
Uzbekistan|Uzbek|Uzbekistani
Vanuatu|Ni-Vanuatu
Vatican City|Vatican
Venezuela|Venezuelan
Vietnam|Vietnamese
Yemen|Yemeni
Zambia|Zambian
Zimbabwe|Zimbabwean
England|English|Englishman,Englishwoman
Scotland|Scottish|Scot
Wales|Welsh|Welshman,Welshwoman
Northern Ireland|Northern Irish
"""

# ISO short names WordNet files under another name of the same country
ALIASES = {"Czechia": "czech republic", "Myanmar": "burma", "Eswatini": "swaziland",
           "North Macedonia": "macedonia", "Vietnam": "viet nam", "Netherlands": "the netherlands",
           "United Kingdom": "britain", "North Korea": "dprk", "Ivory Coast": "ivory coast",
           "Cape Verde": "cape verde", "El Salvador": "salvador", "Bosnia and Herzegovina": "bosnia-herzegovina"}

HEADER = """# memledger lexicon: the countries of ISO 3166-1 and their demonyms that categories.tsv lacks.
# Generated by: python3 scripts/lexicon/gen_demonyms.py (its table: the ISO 3166-1 short names and
#   the English demonyms of the standard lists). Do not edit by hand; change the script and
#   regenerate. Format: categories.tsv's (surface<TAB>category<TAB>canonical<TAB>case); every line
#   is a `country`, `cap` (it applies only written capitalised), its canonical the country's value
#   in categories.tsv where WordNet has the country.
"""


def categories():
    surfaces, values = {}, {}
    for line in open(os.path.join(LEXICON, "categories.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        surface, category, canonical = line.rstrip("\n").split("\t")[:3]
        surfaces.setdefault(surface, set()).add(category)
        if category == "country" and surface == canonical:
            values[surface] = canonical
    return surfaces, values


def lines():
    surfaces, values = categories()
    out = []
    for row in TABLE.strip().splitlines():
        parts = row.split("|")
        country, adjective = parts[0], parts[1]
        nouns = parts[2].split(",") if len(parts) > 2 else []
        name = country.lower()
        canonical = values.get(ALIASES.get(country, name).lower(), values.get(name))
        new = []
        if canonical is None:
            canonical = name
            new.append(name)
        new.append(adjective.lower())
        new.extend(n.lower() for n in nouns)
        for surface in new:
            if surface in surfaces or len(surface.split()) > 3:
                continue
            surfaces[surface] = {"country"}
            out.append(f"{surface}\tcountry\t{canonical}\tcap")
    return sorted(set(out))


def main():
    text = HEADER + "".join(l + "\n" for l in lines())
    path = os.path.join(LEXICON, "demonyms.tsv")
    if "--check" in sys.argv[1:]:
        stale = not os.path.exists(path) or open(path).read() != text
        sys.exit("engine/src/classify/lexicon/demonyms.tsv is stale: run scripts/lexicon/gen_demonyms.py" if stale else 0)
    with open(path, "w") as f:
        f.write(text)
    print(f"{text.count(chr(10)) - HEADER.count(chr(10))} lines written to engine/src/classify/lexicon/demonyms.tsv")


main()
